"""Celery tasks: take ids, call a service, safe to run twice.

Tasks sit above the services they call; nothing below imports this module: work is queued by
task name (memories.queue).
"""

from __future__ import annotations

import time

from celery import shared_task
from django.db import OperationalError

from memories import services

# How long one message's jobs run (plus the job running then, itself bounded: memories.background)
# before the rest of its batch is handed back: far inside CELERY_TASK_SOFT_TIME_LIMIT (120 s).
BATCH_SECONDS = 10.0


@shared_task(
    bind=True,
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=60,
    max_retries=8,
)
def process_outbox(self, outbox_id: int | list[int], budget_seconds: float = BATCH_SECONDS) -> bool:
    """A wake-up for one waiting job, or for a batch of them (the request-side publisher sends a
    burst's rows as one message): each id asks for the next job in turn across projects
    (`outbox_process_next`), not for that row, so a project's backlog cannot hold another's
    report behind it. Jobs stop when none waits; once `budget_seconds` have gone, the rest of the
    batch goes back to the broker as one message (another worker may take it at once), so a task
    stays far inside its time limits however big its jobs. True when any job ran here."""
    ids = outbox_id if isinstance(outbox_id, list) else [outbox_id]
    started = time.monotonic()
    processed, failed = False, None
    for n in range(len(ids)):
        if n and time.monotonic() - started >= budget_seconds:
            rest = ids[n:]
            services.outbox_publish(outbox_id=rest if len(rest) > 1 else rest[0])
            break
        try:  # one job's error does not hold back the rest of the batch
            ran = services.outbox_process_next()
        except Exception as exc:  # noqa: BLE001 - raised below, once the batch is through
            failed = failed or exc
            continue
        if not ran:
            break  # nothing waits: the batch's other wake-ups would find nothing either
        processed = True
    if failed is not None:
        # A database error is retried with backoff (its row's claim was given back, and the
        # retry's wake-ups take the next jobs in turn); any other is logged by Celery, and its
        # row waits for the stale limit and the sweep.
        raise failed
    return processed


@shared_task(acks_late=True)
def outbox_sweep() -> int:
    return services.outbox_sweep()


@shared_task(acks_late=True)
def retention_sweep() -> dict:
    """Forget memories past their project's retention (optional per-project `retention_days`)."""
    return services.retention_enforce()
