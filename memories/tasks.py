"""Celery tasks: take ids, call a service, safe to run twice."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError


@shared_task(bind=True, acks_late=True, autoretry_for=(OperationalError,), retry_backoff=True,
             retry_backoff_max=60, max_retries=8)
def process_outbox(self, outbox_id: int) -> bool:
    from memories.services import outbox_process

    return outbox_process(outbox_id=outbox_id)


@shared_task(acks_late=True)
def outbox_sweep() -> int:
    from memories.services import outbox_sweep as sweep

    return sweep()


@shared_task(acks_late=True)
def retention_sweep() -> dict:
    """Forget memories past their project's retention (optional per-project `retention_days`)."""
    from memories.services import retention_enforce

    return retention_enforce()
