"""The extractor interface, shared by the rule-based and the LLM extractor, and the rule package
(`factrules`, a library of its own) adapted to it as the default extractor."""

from __future__ import annotations

import re
from typing import Protocol

import factrules
from factrules import Candidate, UserMessage

from common.tokens import text_tokens


def fact_normalize(text: str) -> str:
    """The form two facts are compared in: lower case, no punctuation, single spaces."""
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", "", text.lower())).strip()[:500]


def fact_tokens(text: str) -> int:
    """What one fact costs in the facts block (its text plus the line's bullet)."""
    return text_tokens(text) + 2


class Extractor(Protocol):
    name: str

    def extract(self, messages: list[UserMessage]) -> list[Candidate]: ...


class RuleExtractor:
    """The rule package as an `Extractor`: offline, no model; the default when THREADLESS_FACT_EXTRACTOR
    is unset."""

    name = "rules"

    def extract(self, messages: list[UserMessage]) -> list[Candidate]:
        return factrules.extract(messages)
