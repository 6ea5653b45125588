"""Celery tasks: take ids, call a service, safe to run twice.

Tasks sit above the services they call; nothing below imports this module: work is queued by
task name (memories.queue).
"""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from memories import embeddings, queue, services


@shared_task(
    bind=True,
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=60,
    max_retries=8,
)
def process_outbox(self, outbox_id: int | list[int]) -> bool:
    """One outbox row, or a batch of them (the request-side publisher sends a burst's rows as one
    message); True when any was processed here."""
    ids = outbox_id if isinstance(outbox_id, list) else [outbox_id]
    processed, failed = False, None
    for i in ids:  # one row's error does not hold back the rest of its batch
        try:
            processed = services.outbox_process(outbox_id=i) or processed
        except Exception as exc:  # noqa: BLE001 - raised below, once the batch is through
            failed = failed or exc
    if failed is not None:
        # A database error is retried with backoff (the rows done already are not claimed again);
        # any other is logged by Celery, and its row waits for the stale limit and the sweep.
        raise failed
    return processed


@shared_task(acks_late=True)
def outbox_sweep() -> int:
    return services.outbox_sweep()


@shared_task(acks_late=True)
def retention_sweep() -> dict:
    """Forget memories past their project's retention (optional per-project `retention_days`)."""
    return services.retention_enforce()


@shared_task(acks_late=True)
def backfill_vectors(memory_id: str) -> dict:
    """Re-embed a memory's messages after an embedding model change, in bounded chunks (re-queues
    itself while some remain)."""
    try:
        step = embeddings.backfill(memory_id=memory_id)
    except embeddings.EmbeddingFailed:
        return {"embedded": 0, "failed": True}
    if step["remaining"] and step["embedded"]:
        queue.send(queue.BACKFILL_VECTORS, memory_id=memory_id)
    return step
