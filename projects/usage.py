"""Usage counts (per-day operation volume, per-month plan requests) without a hot row.

A request counts itself in the counter store (common.counters: Redis INCR, or the embedded
default's counter file): atomic, exact across processes, no database write. The plan allowance
is enforced on that live count at request time, so it is as exact as the increment itself. The
database rows the console reads (`ApiCall`, `ProjectUsage`) are copies of those totals, written
by the periodic `usage_flush` task (Celery beat, every THREADLESS_USAGE_FLUSH_SECONDS): a few
seconds late, and exact, because a flush copies totals (`GREATEST(row, total)`), never adds.

If the counter store loses its data (a Redis restart without persistence), the first increment
of a key starts again from the database copy: the key is seeded with the flushed total, so at
most the counts of the last unflushed seconds are lost.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from django.db import IntegrityError, transaction
from django.db.models import F
from django.db.models.functions import Greatest

from common import counters
from projects.models import ApiCall, Project, ProjectUsage

log = logging.getLogger("threadless.usage")

DAY_TTL = 3 * 86400
MONTH_TTL = 40 * 86400


def volume_key(project_id: str, day: str, operation: str) -> str:
    return f"tl:use:d:{project_id}:{day}:{operation}"


def plan_key(project_id: str, period: str) -> str:
    return f"tl:use:m:{project_id}:{period}"


def _today() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def current_period() -> str:
    return datetime.now(UTC).strftime("%Y-%m")


def _flushed_total(key: str) -> int:
    """The database copy of `key`'s total (what a fresh key starts from)."""
    parts = key.split(":")
    if parts[2] == "d":
        _, _, _, project_id, day, operation = parts
        row = ApiCall.objects.filter(project_id=project_id, day=day, operation=operation).values_list(
            "count", flat=True
        )
    else:
        _, _, _, project_id, period = parts
        row = ProjectUsage.objects.filter(project_id=project_id, period=period).values_list(
            "requests", flat=True
        )
    return row.first() or 0


def seeded(key: str, count: int) -> int:
    """`count` as the store returned it; a first increment adds the flushed total (see above)."""
    if count != 1:
        return count
    base = _flushed_total(key)
    return counters.store().add(key, base) if base else count


def plan_item(project_id: str) -> tuple[str, int, bool]:
    return (plan_key(project_id, current_period()), MONTH_TTL, True)


def operation_item(project_id: str, operation: str) -> tuple[str, int, bool]:
    """Today's volume counter of `operation`, as an item for `counters.incr_many` (the hot routes
    count it in the rate limiter's round trip: projects.ratelimit.check_rate_and_quota)."""
    return (volume_key(project_id, _today(), operation), DAY_TTL, True)


def count_operation(*, project_id: str, operation: str) -> int:
    """Count one `operation` in the project's volume for today (one round trip, no DB write)."""
    key, ttl, flush = operation_item(project_id, operation)
    return seeded(key, counters.incr(key, ttl, flush=flush))


def plan_used(project_id: str) -> int:
    """This month's plan requests, live (the database copy may be a few seconds behind)."""
    key = plan_key(project_id, current_period())
    return max(counters.store().get(key), _flushed_total(key))


def _upsert(model, lookup: dict, field: str, total: int) -> None:
    if model.objects.filter(**lookup).update(**{field: Greatest(F(field), total)}):
        return
    try:
        with transaction.atomic():
            model.objects.create(**lookup, **{field: total})
    except IntegrityError:
        model.objects.filter(**lookup).update(**{field: Greatest(F(field), total)})


def usage_flush() -> int:
    """Copy the dirty counter totals into ApiCall / ProjectUsage; returns how many rows it wrote."""
    store = counters.store()
    claimed = store.claim_dirty()
    if not claimed:
        store.prune()
        return 0
    parsed = []
    for key, total in claimed.items():
        parts = key.split(":")
        if len(parts) == 6 and parts[2] == "d":
            parsed.append(
                (ApiCall, {"project_id": parts[3], "day": parts[4], "operation": parts[5]}, "count", total)
            )
        elif len(parts) == 5 and parts[2] == "m":
            parsed.append((ProjectUsage, {"project_id": parts[3], "period": parts[4]}, "requests", total))
    alive = set(
        Project.objects.filter(pk__in={lookup["project_id"] for _, lookup, _, _ in parsed}).values_list(
            "pk", flat=True
        )
    )
    written = 0
    with transaction.atomic():
        for model, lookup, field, total in parsed:
            if lookup["project_id"] in alive:  # a deleted project's counts go with it
                _upsert(model, lookup, field, total)
                written += 1
    store.release(claimed)
    store.prune()
    return written
