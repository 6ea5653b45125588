"""The LLM extractor, used when the project has a model configured (`Project.model_config`).

It is written against one narrow function, `complete(messages) -> str` (OpenAI-chat-shaped
messages in, the reply text out), so the model call goes through the same provider clients as
the pipeline's llm task (`providers.complete`) and tests can point it at a local stub.
The model sees only the user's own committed messages, never the assistant's or the
instructions; what it answers is parsed defensively and filtered before it reaches the store.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable

import providers
from memories.facts.base import Candidate, UserMessage
from memories.provider_keys import provider_api_key

log = logging.getLogger("threadless.facts")

Complete = Callable[[list[dict]], str]

MIN_CONFIDENCE = 0.6
MAX_FACT_CHARS = 300
MAX_INPUT_CHARS = 12_000

SYSTEM_PROMPT = """You extract durable facts about a user from what the user said.
You are given ONLY the user's own messages, numbered. Extract facts the user states about
themselves or asks you to remember: name, where they live, job, employer, preferences, dislikes,
allergies, diet, pets, birthdays, family, plans they asked you to remember.
Rules:
- Only what the user plainly states as true now. No questions, hypotheticals, jokes, guesses,
  things other people said, or past states they have left ("I used to live in Rome").
- One short third-person sentence per fact, starting with "User" ("User lives in Berlin").
- slot: what the fact is about, so a newer statement can replace an older one: "name",
  "location", "job", "employer", "diet", "age", "birthday", "preference:<thing>",
  "allergy:<thing>", "pet:<name>", "favorite:<category>"; "" when nothing would replace it.
- source: the numbers of the messages the fact comes from.
- confidence: 0..1.
Answer with JSON only: {"facts": [{"text": "...", "slot": "...", "source": [1], "confidence": 0.9}]}
If there is nothing, answer {"facts": []}."""


class ExtractorFailed(Exception):
    """The model could not be asked or its answer was unusable: fall back to the rules."""


def _parse(reply: str) -> list[dict]:
    text = reply.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1).strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ExtractorFailed("the model's answer had no JSON object")
    try:
        data = json.loads(text[start : end + 1])
    except ValueError as exc:
        raise ExtractorFailed("the model's answer was not valid JSON") from exc
    facts = data.get("facts") if isinstance(data, dict) else None
    if not isinstance(facts, list):
        raise ExtractorFailed("the model's answer had no facts list")
    return [f for f in facts if isinstance(f, dict)]


class LLMExtractor:
    name = "llm"

    def __init__(self, complete: Complete):
        self.complete = complete

    def extract(self, messages: list[UserMessage]) -> list[Candidate]:
        if not messages:
            return []
        numbered, used = [], 0
        for i, message in enumerate(messages, 1):
            line = f"[{i}] {message.text.strip()}"
            used += len(line)
            if used > MAX_INPUT_CHARS:
                break
            numbered.append(line)
        prompt = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": "The user's messages:\n" + "\n".join(numbered)},
        ]
        try:
            reply = self.complete(prompt)
        except Exception as exc:  # noqa: BLE001 - any provider failure means: use the rules instead
            raise ExtractorFailed(f"model call failed: {exc}") from exc
        candidates = []
        for item in _parse(reply):
            text = item.get("text")
            if not isinstance(text, str) or not text.strip() or len(text) > MAX_FACT_CHARS:
                continue
            try:
                confidence = float(item.get("confidence", 0.8))
            except (TypeError, ValueError):
                confidence = 0.0
            if confidence < MIN_CONFIDENCE:
                continue
            slot = item.get("slot") if isinstance(item.get("slot"), str) else ""
            slot = re.sub(r"\s+", " ", slot.strip().lower())[:100]
            sources = item.get("source") or item.get("sources") or []
            if not isinstance(sources, list):
                sources = [sources]
            picked = [
                messages[int(s) - 1]
                for s in sources
                if isinstance(s, (int, str)) and str(s).isdigit() and 1 <= int(s) <= len(numbered)
            ]
            if not picked:  # a fact must come from something the user said
                continue
            candidates.append(
                Candidate(
                    text=" ".join(text.split()),
                    slot=slot,
                    confidence=min(confidence, 1.0),
                    source_entry_ids=sorted({m.entry_id for m in picked}),
                    source_seq=max(m.seq for m in picked),
                )
            )
        return candidates


def summarize_with(complete: Complete, previous: str, lines: list[str], max_chars: int) -> str:
    """Fold older conversation lines into the rolling summary with the model."""
    prompt = [
        {
            "role": "system",
            "content": (
                "You maintain a running summary of an older part of a conversation between a user and an "
                f"assistant. Update the summary with the new lines. Keep what matters later (decisions, "
                f"facts, open questions), drop chit-chat. Plain text, at most {max_chars} characters."
            ),
        },
        {
            "role": "user",
            "content": f"Summary so far:\n{previous or '(empty)'}\n\nNew lines:\n" + "\n".join(lines),
        },
    ]
    reply = complete(prompt).strip()
    if not reply:
        raise ExtractorFailed("the model returned an empty summary")
    return reply[:max_chars]


def complete_for_project(project) -> Complete | None:
    """The project's model as a `complete` function, through the shared provider clients.

    None when the project has no model configured.
    """
    config = getattr(project, "model_config", None)
    if not isinstance(config, dict) or not config.get("provider"):
        return None
    try:
        # The same key resolution as the llm task: secret store (apiKeySecret) or an allowed env var.
        api_key = provider_api_key(project_id=project.pk, task=config)
    except LookupError as exc:
        log.warning("project %s: model_config key not usable (%s); using the rules", project.pk, exc)
        return None

    def complete(messages: list[dict]) -> str:
        return providers.complete(
            provider=config["provider"],
            model=config.get("model") or "",
            base_url=config.get("baseUrl"),
            api_key=api_key,
            messages=messages,
            params=config.get("params") or {"temperature": 0},
            timeout_ms=int(config.get("timeoutMs") or 30_000),
        )

    return complete
