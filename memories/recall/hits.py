"""The two shapes recall's stages pass along: a stored message (`Message`) and a ranked candidate
(`Hit`)."""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple


class Message(NamedTuple):
    """A committed user/assistant message as the index (or the entries table) holds it."""

    entry_id: int
    seq: int
    turn: int
    role: str
    created_at: datetime | str  # UTC ISO text as SQLite's index stores it, a datetime elsewhere
    text: str
    thread: str = "default"  # the thread it was said in


class Hit(NamedTuple):
    """A candidate message with its score so far, and the day it was written (UTC, ISO)."""

    score: float
    seq: int
    day: str
    message: Message


# The stages make a few thousand of these a search: `new(Hit, (...))` is tuple's own constructor,
# without the Python-level `__new__` a NamedTuple adds (about a millisecond a search).
new = tuple.__new__
