"""Rules that extract what the user asks to be remembered as it is (a fact with no slot)."""

from __future__ import annotations

import re

from .fragments import REST
from .rule import Rule

PRONOUN_SWAPS = [
    (r"\bI am\b", "the user is"),
    (r"\bI'm\b", "the user is"),
    (r"\bI've\b", "the user has"),
    (r"\bI have\b", "the user has"),
    (r"\bI was\b", "the user was"),
    (r"\bI'll\b", "the user will"),
    (r"\bI\b", "the user"),
    (r"\b[Mm]y\b", "the user's"),
    (r"\b[Mm]e\b", "the user"),
    (r"\b[Mm]ine\b", "the user's"),
    (r"\b[Mm]yself\b", "themself"),
]


def _third_person(text: str) -> str:
    for pattern, repl in PRONOUN_SWAPS:
        text = re.sub(pattern, repl, text)
    return text


def _sentence_case(text: str) -> str:
    return text[:1].upper() + text[1:]


def _remember(m):
    rest = m.group(1).strip().rstrip(".!")
    first = rest.split()[0].lower() if rest.split() else ""
    if not rest or first in (
        "when",
        "what",
        "where",
        "how",
        "who",
        "why",
        "if",
        "whether",
        "to",
        "this",
        "that",
        "it",
    ):
        return None
    if len(rest) > 300:
        return None
    return "", _sentence_case(_third_person(rest))


REMEMBER = Rule(
    r"(?i:(?:please\s+|can\s+you\s+|could\s+you\s+)?remember\s+that|please\s+remember|"
    r"(?:please\s+)?(?:don't|do\s+not)\s+forget\s+that|(?:please\s+)?note\s+that|keep\s+in\s+mind\s+that|"
    r"for\s+future\s+reference,?)[,:]?\s+" + REST,
    _remember,
    0.9,
    slot="",
    alone=True,
)
