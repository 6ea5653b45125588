"""Recall: full-text search over committed messages, behind one interface.

SQLite FTS5 on the embedded default, PostgreSQL full-text in production. Decorate asks for the
top few matches outside the window; it never ranks the whole memory in Python.

This module is the seam: `index_entries`, `search`, `forget_memory`. Until the recall work lands
(background memory issue) it indexes nothing and finds nothing.
"""

from __future__ import annotations


def index_entries(*, memory_id: str, entry_ids: list[int]) -> int:
    """Add committed message entries to the index. Returns how many were indexed."""
    return 0


def search(*, memory_id: str, query: str, limit: int = 5, before_seq: int | None = None) -> list[dict]:
    """Ranked snippets: [{"entry_id", "seq", "turn", "date", "snippet", "score", "role"}]."""
    return []


def forget_memory(*, memory_id: str) -> int:
    """Remove a memory's index rows. Returns how many were removed."""
    return 0
