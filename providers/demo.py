"""The built-in offline `demo` model: deterministic, clearly labelled, answers from the memory.

It reads the facts and recall blocks of its system prompt (what the context builder gave it)
and the last user message. It never quotes the failures block: provider text must not reach an
end user through the demo's reply.
"""

from __future__ import annotations

from common.context_headers import FACTS_HEADER, RECALL_HEADER
from common.messages import text_of

LABEL = "[demo model]"


def _block(system: str, header: str) -> list[str]:
    if header not in system:
        return []
    body = system.split(header, 1)[1].split("\n\n", 1)[0]
    return [line[2:].strip() for line in body.splitlines() if line.startswith("- ")]


def reply(system: str, messages: list[dict]) -> str:
    last = next((text_of(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    last = " ".join(last.split())
    if len(last) > 200:
        last = last[:199] + "…"
    end = "" if last[-1:] in ".!?…" else "."
    parts = [f"{LABEL} You said: \u201c{last}\u201d{end}" if last else f"{LABEL} Hello!"]
    facts = _block(system, FACTS_HEADER)
    if facts:
        parts.append("What I remember about you: " + "; ".join(facts[:5]) + ".")
    recalled = _block(system, RECALL_HEADER)
    if recalled:
        parts.append("Earlier we talked about: " + recalled[0] + ("" if recalled[0].endswith(".") else "."))
    turns = sum(1 for m in messages if m.get("role") == "user")
    parts.append(f"(This is message {turns} in what I can see of our conversation.)")
    return " ".join(parts)


def call(
    *, model, base_url, api_key, system, messages, params, timeout_ms, stream, on_token, should_stop
) -> str:
    text = reply(system, messages)
    if stream:
        words = text.split(" ")
        for i, word in enumerate(words):
            on_token(word + (" " if i < len(words) - 1 else ""))
    return text
