"""The built-in offline `demo` model: deterministic, clearly labelled, answers from the memory.

It reads the facts and recall blocks of its system prompt (what the context builder gave it)
and the last user message: a question is answered with the fact or recalled snippet that shares a
word with it, so a conversation shows the memory at work without any model. It never quotes the
failures block: provider text must not reach an end user through the demo's reply.
"""

from __future__ import annotations

import re

from common.context_headers import FACTS_HEADER, RECALL_HEADER
from common.messages import text_of

LABEL = "[demo model]"


def _block(system: str, header: str) -> list[str]:
    if header not in system:
        return []
    body = system.split(header, 1)[1].split("\n\n", 1)[0]
    return [line[2:].strip() for line in body.splitlines() if line.startswith("- ")]


# Words that say nothing about what a question is about, left out when matching it to a fact.
QUESTION_WORDS = frozenset(
    "what where who whom which when why how the and for are was were did does have has had can could "
    "would should tell about know remember you your this that with from".split()
)


def _words(text: str) -> set[str]:
    """The content words of `text`, lower-cased, without a possessive or plural "s"."""
    out = set()
    for word in re.findall(r"[^\W_]+(?:'s)?", text.lower()):
        word = word.removesuffix("'s")
        if len(word) > 3 and word.endswith("s"):
            word = word[:-1]
        if len(word) >= 3 and word not in QUESTION_WORDS:
            out.add(word)
    return out


def _about(question: str, lines: list[str]) -> str | None:
    """The first of `lines` (facts or recalled snippets, the most relevant first as the context
    builder ranked them) sharing a content word with the question, if any does."""
    asked = _words(question)
    return next((line for line in lines if asked & _words(line)), None) if asked else None


def _sentence(text: str) -> str:
    return text if text[-1:] in ".!?…" else text + "."


# A recall line: "(thread trip) user: text", the thread named only when it is another one.
RECALL_LINE = re.compile(r"(?:\(thread [^)]*\) )?(user|assistant): ")


def _recalled(line: str) -> str:
    """A recalled snippet as said: 'you said “…”' or 'I said “…”'."""
    found = RECALL_LINE.match(line)
    if found is None:
        return _sentence(line)
    who = "you" if found.group(1) == "user" else "I"
    return f"{who} said \u201c{line[found.end() :]}\u201d."


def reply(system: str, messages: list[dict]) -> str:
    """The user's last message, then what the memory gave about it: the fact or recalled snippet
    that answers a question, the other facts, or that nothing is remembered yet."""
    last = next((text_of(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
    last = " ".join(last.split())
    if len(last) > 200:
        last = last[:199] + "…"
    asks = last.endswith("?")
    end = "" if last[-1:] in ".!?…" else "."
    said = f"You asked: \u201c{last}\u201d" if asks else f"You said: \u201c{last}\u201d{end}"
    parts = [f"{LABEL} {said}" if last else f"{LABEL} Hello!"]
    facts = _block(system, FACTS_HEADER)
    recalled = _block(system, RECALL_HEADER)
    fact = _about(last, facts) if asks else None
    snippet = _about(last, recalled) if asks and fact is None else None
    if fact is not None:
        parts.append("From memory: " + _sentence(fact))
    elif snippet is not None:
        parts.append("From memory: " + _recalled(snippet))
    others = [f for f in facts if f != fact][:5]
    if others:
        lead = "I also remember: " if fact or snippet else "What I remember about you: "
        parts.append(lead + "; ".join(others) + ".")
    if recalled and snippet is None:
        parts.append("Earlier " + _recalled(recalled[0]))
    if not facts and not recalled:
        parts.append(
            "I remember nothing about you yet: tell me something (your name, a pet, where you live), "
            "then ask me about it."
        )
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
