"""Celery tasks of the webhooks: take ids, call a service, safe to run twice (a delivery is
claimed with one conditional UPDATE before it is sent)."""

from __future__ import annotations

from celery import shared_task

from webhooks import services


@shared_task(acks_late=True)
def deliver(delivery_id: str, manual: bool = False) -> str | None:
    return services.delivery_attempt(delivery_id=delivery_id, manual=manual)


@shared_task(acks_late=True)
def sweep() -> int:
    return services.deliveries_sweep()
