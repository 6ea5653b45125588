"""Celery tasks of the webhooks: take ids, call a service, safe to run twice (a delivery is
claimed with one conditional UPDATE before it is sent)."""

from __future__ import annotations

from celery import shared_task

from webhooks import services


@shared_task(acks_late=True)
def deliver(delivery_id: str | list[str], manual: bool = False) -> list[str | None]:
    """Send one delivery, or each of a batch (one's failure does not hold back the rest)."""
    ids = delivery_id if isinstance(delivery_id, list) else [delivery_id]
    return [services.delivery_attempt(delivery_id=one, manual=manual) for one in ids]


@shared_task(acks_late=True)
def sweep() -> int:
    return services.deliveries_sweep()
