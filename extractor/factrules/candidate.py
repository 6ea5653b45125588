"""What the extractor is given and what it gives back: `UserMessage` in, `Candidate` out."""

from __future__ import annotations

from dataclasses import dataclass, field


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
