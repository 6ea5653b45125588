"""The extractor interface, shared by the rule-based and the LLM extractor."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from common.tokens import text_tokens


def fact_normalize(text: str) -> str:
    """The form two facts are compared in: lower case, no punctuation, single spaces."""
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", "", text.lower())).strip()[:500]


def fact_tokens(text: str) -> int:
    """What one fact costs in the facts block (its text plus the line's bullet)."""
    return text_tokens(text) + 2


@dataclass(frozen=True)
class UserMessage:
    """One committed user message, the only thing an extractor is given."""

    entry_id: int
    seq: int
    text: str


@dataclass
class Candidate:
    """A proposed fact. `slot` names what it is about: a newer candidate on the same slot
    supersedes the older fact ("location", "name", "preference:coffee", "allergy:peanuts");
    an empty slot means the fact stands alone (de-duplicated by its text only)."""

    text: str
    slot: str = ""
    confidence: float = 0.9
    source_entry_ids: list[int] = field(default_factory=list)
    source_seq: int = 0


class Extractor(Protocol):
    name: str

    def extract(self, messages: list[UserMessage]) -> list[Candidate]: ...
