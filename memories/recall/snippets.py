"""What a hit shows: its snippet (the message whole when short, else a window around the part
holding the most query terms) and its date. Bounded whatever the message's length."""

from __future__ import annotations

from datetime import UTC, datetime

from memories.recall.hits import Message

SNIPPET_CHARS = 240
SNIPPET_SPOTS = 48  # occurrences of query terms weighed when placing a snippet's window


def date_of(value) -> str:
    """The UTC day (ISO) of a datetime or ISO text."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).date().isoformat()


def day_of(value) -> str:
    """`date_of` without parsing for what the index stores on SQLite (UTC ISO text)."""
    if isinstance(value, str) and value.endswith("+00:00") and value[4:5] == "-":
        return value[:10]
    return date_of(value)


def time_of(value) -> str:
    """A datetime or the index's UTC ISO text, as UTC ISO text."""
    if isinstance(value, str):
        return value
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC).isoformat()


def as_result(message: Message, terms: list[str], score: float, whole_chars: int = 0) -> dict:
    """A hit as `search` answers it."""
    return {
        "entry_id": message.entry_id,
        "seq": message.seq,
        "turn": message.turn,
        "created_at": time_of(message.created_at),
        "date": date_of(message.created_at),
        "role": message.role,
        "snippet": snippet(message.text, terms, max(whole_chars, SNIPPET_CHARS)),
        "score": round(score, 4),
        "thread": message.thread,
    }


def snippet(text: str, terms: list[str], whole_chars: int = SNIPPET_CHARS) -> str:
    """The message itself (spacing collapsed) when at most `whole_chars` long; else a window of
    SNIPPET_CHARS around the part holding the most query terms."""
    text = " ".join(text.split())
    if len(text) <= whole_chars:
        return text
    lower = text.lower()
    at = _densest(lower, terms)
    start = max(0, min(at - SNIPPET_CHARS // 3, len(text) - SNIPPET_CHARS))
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    piece = text[start : start + SNIPPET_CHARS]
    if start + SNIPPET_CHARS < len(text):
        piece = piece.rsplit(" ", 1)[0] + " …"
    return ("… " if start > 0 else "") + piece


def _densest(lower: str, terms: list[str]) -> int:
    """Where the window should center: the occurrence of a query term whose window holds the most
    distinct query terms (the first such; 0 when none occurs). At most SNIPPET_SPOTS occurrences
    are looked at, so the cost is bounded whatever the message's length."""
    spots = []
    for t in terms:
        at = lower.find(t)
        while at >= 0 and len(spots) < SNIPPET_SPOTS:
            spots.append((at, t))
            at = lower.find(t, at + 1)
    if not spots:
        return 0
    spots.sort()
    # One pass with two pointers: the window [at - SNIPPET_CHARS // 3, that + SNIPPET_CHARS) of each spot.
    best, where, lo, hi = 0, spots[0][0], 0, 0
    inside: dict[str, int] = {}
    for at, _ in spots:
        start = at - SNIPPET_CHARS // 3
        while hi < len(spots) and spots[hi][0] + len(spots[hi][1]) <= start + SNIPPET_CHARS:
            inside[spots[hi][1]] = inside.get(spots[hi][1], 0) + 1
            hi += 1
        while lo < hi and spots[lo][0] < start:
            inside[spots[lo][1]] -= 1
            if not inside[spots[lo][1]]:
                del inside[spots[lo][1]]
            lo += 1
        if len(inside) > best:
            best, where = len(inside), at
    return where
