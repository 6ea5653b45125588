"""Background processing of newly stored entries (run by the worker through the outbox).

Every step is idempotent, so a re-run after a crash does no harm: recall indexing skips rows
already indexed; fact extraction de-duplicates; compaction works from `summary_upto_seq`.
"""

from __future__ import annotations

from . import recall
from .models import Entry


def process_entries(*, memory_id: str, from_seq: int, to_seq: int) -> dict:
    ids = list(
        Entry.objects.filter(memory_id=memory_id, seq__gte=from_seq, seq__lte=to_seq, kind="message", committed=True)
        .values_list("id", flat=True)
    )
    indexed = recall.index_entries(memory_id=memory_id, entry_ids=ids) if ids else 0
    return {"indexed": indexed}
