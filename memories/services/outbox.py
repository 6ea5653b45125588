"""The outbox: background work queued in the same transaction as the write that needs it,
handed to the broker after commit, claimed once, swept when a worker dies or the broker was down."""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from memories.background import process_entries
from memories.models import Memory, Outbox
from memories.tasks import process_outbox

log = logging.getLogger("threadless.memories")


def outbox_enqueue(*, memory: Memory, payload: dict, kind: str = "report") -> Outbox:
    row = Outbox.objects.create(memory=memory, kind=kind, payload=payload)
    transaction.on_commit(lambda: outbox_publish(outbox_id=row.id))
    return row


def outbox_publish(*, outbox_id: int) -> bool:
    """Hand a row to the broker. A broker outage is logged, not raised: the sweep re-queues it."""
    try:
        process_outbox.apply_async(args=[outbox_id], retry=False)
        return True
    except Exception as exc:  # noqa: BLE001 - any broker failure; the row stays for the sweep
        log.warning("outbox %s not queued (%s); the sweep will retry", outbox_id, exc.__class__.__name__)
        return False


def outbox_claim(*, outbox_id: int) -> Outbox | None:
    """Claim a row for processing: unclaimed, or claimed so long ago that its worker died."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.THREADLESS_OUTBOX_STALE_SECONDS)
    claimed = (
        Outbox.objects.filter(id=outbox_id, processed_at=None)
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=stale))
        .update(claimed_at=now, attempts=F("attempts") + 1)
    )
    return Outbox.objects.filter(id=outbox_id).first() if claimed else None


def outbox_process(*, outbox_id: int) -> bool:
    """Run one outbox row's background work exactly once (idempotent steps, claimed row)."""
    row = outbox_claim(outbox_id=outbox_id)
    if row is None:
        return False
    process_entries(memory_id=row.memory_id, from_seq=row.payload.get("from_seq", 1),
                    to_seq=row.payload.get("to_seq", 0))
    Outbox.objects.filter(id=row.id, processed_at=None).update(processed_at=timezone.now(), last_error="")
    return True


def outbox_sweep() -> int:
    """Re-queue rows never picked up and rows whose claim went stale (a worker died mid-job)."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.THREADLESS_OUTBOX_STALE_SECONDS)
    waiting = now - timedelta(seconds=max(5, settings.THREADLESS_OUTBOX_SWEEP_SECONDS))
    ids = list(
        Outbox.objects.filter(processed_at=None)
        .filter(Q(claimed_at__isnull=True, created_at__lt=waiting) | Q(claimed_at__lt=stale))
        .order_by("id")
        .values_list("id", flat=True)[:500]
    )
    for outbox_id in ids:
        outbox_publish(outbox_id=outbox_id)
    return len(ids)
