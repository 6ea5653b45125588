"""The events an endpoint can ask for, and the body each delivery carries (SPEC 4.12).

A body is `{"id": "evt_…", "type", "created_at", "project_id", "data": {"memory_id",
"external_id", "thread"?, …}}`. `data` stays small: ids, counts, the digest's text; message and
fact text only for an endpoint that opted in (`include_text`).
"""

from __future__ import annotations

from datetime import datetime

import orjson

# What each event says happened; the order is the console's and the docs'.
EVENT_TYPES = {
    "memory.processed": "the background work of a report or a history import is done",
    "fact.created": "a fact was learned or added",
    "fact.superseded": "a newer statement replaced a fact",
    "fact.deleted": "a person deleted a fact",
    "digest.created": "a task failed under the memory policy",
    "thread.deleted": "a thread was deleted (with the receipt's counts)",
    "memory.deleted": "a memory was deleted (with the receipt's counts)",
    "import.completed": "an exported memory or a thread's history was imported",
}
TEST_EVENT = "webhook.test"


def event_body(
    *,
    event_id: str,
    type: str,
    at: datetime,
    project_id: str,
    data: dict,
    text: dict | None,
    include_text: bool,
) -> bytes:
    """The JSON bytes one endpoint receives for an event (the same bytes on every attempt)."""
    data = {**data, **(text or {})} if include_text else data
    return orjson.dumps(
        {
            "id": event_id,
            "type": type,
            "created_at": at.isoformat(),
            "project_id": project_id,
            "data": data,
        }
    )
