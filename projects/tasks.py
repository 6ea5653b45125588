"""Celery tasks of the projects layer: take ids, call a service, safe to run twice."""

from __future__ import annotations

from celery import shared_task


@shared_task(acks_late=True)
def usage_flush() -> int:
    """Copy the usage counters' totals into ApiCall / ProjectUsage (a few seconds late, exact)."""
    from projects.usage import usage_flush as flush

    return flush()
