"""Per-key rate limits and per-project plan allowances, correct across processes.

Besides the per-key bucket (`check_rate`), callers add their own buckets with `check_bucket`
(the end-user routes: per client address and per conversation) and daily counters with
`incr_daily` (an agent's end-user turn budget); all share the one atomic `incr`.

Counters are atomic: Redis INCR in production, `UPDATE … SET count = count + 1` on the
embedded default. Never read-modify-write.

`request` is always the Django request (under DRF: `request._request`, in `KeyRateThrottle` only);
a limit's X-RateLimit-* headers go on `request.ratelimit_headers`, which the middleware adds to
every answer.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from rest_framework.throttling import BaseThrottle

from common.errors import QuotaExceeded, RateLimited
from projects.models import ProjectUsage, RateCounter

WINDOW_SECONDS = 60
_redis = None


def _redis_client():
    global _redis
    if _redis is None:
        import redis

        _redis = redis.Redis.from_url(settings.REDIS_URL)
    return _redis


def _incr_db(bucket: str, expires_at: datetime) -> int:
    # Increment and read back in one transaction: the row stays locked (PostgreSQL) or the
    # database write-locked (SQLite IMMEDIATE) in between, so each caller reads its own count.
    # Read outside it, two processes could both read the later count and both be refused.
    with transaction.atomic():
        updated = RateCounter.objects.filter(bucket=bucket).update(count=F("count") + 1)
        if not updated:
            try:
                with transaction.atomic():
                    RateCounter.objects.create(bucket=bucket, count=1, expires_at=expires_at)
                return 1
            except IntegrityError:
                RateCounter.objects.filter(bucket=bucket).update(count=F("count") + 1)
        return RateCounter.objects.filter(bucket=bucket).values_list("count", flat=True).first() or 1


def incr(bucket: str, ttl: int) -> int:
    if settings.REDIS_URL:
        client = _redis_client()
        pipe = client.pipeline()
        pipe.incr(bucket)
        pipe.expire(bucket, ttl, nx=True)
        count, _ = pipe.execute()
        return int(count)
    return _incr_db(bucket, datetime.now(UTC) + timedelta(seconds=ttl))


def rate_limit_for(project) -> int:
    if project.rate_limit_per_minute is not None:
        return project.rate_limit_per_minute
    return settings.THREADLESS_RATE_LIMIT_PER_MINUTE


def _window(bucket: str, limit: int) -> tuple[int, dict, float, float]:
    """Count one request in `bucket`'s current fixed window: (count, headers, reset, now)."""
    now = time.time()
    window = int(now // WINDOW_SECONDS)
    reset = (window + 1) * WINDOW_SECONDS
    count = incr(f"{bucket}:{window}", WINDOW_SECONDS * 2)
    headers = {
        "X-RateLimit-Limit": str(limit),
        "X-RateLimit-Remaining": str(max(0, limit - count)),
        "X-RateLimit-Reset": str(reset),
    }
    return count, headers, reset, now


def check_rate(request, key) -> None:
    limit = rate_limit_for(key.project)
    if not limit:
        return
    # The lookup prefix is random per key, so servers sharing one Redis never share a bucket.
    count, headers, reset, now = _window(f"tl:rl:{key.lookup}", limit)
    request.ratelimit_headers = headers
    if count > limit:
        retry = max(1, int(reset - now + 0.999))
        raise RateLimited(
            f"Too many requests for this key: the limit is {limit} per minute.",
            headers={**headers, "Retry-After": str(retry)},
        )


def check_bucket(request, *, bucket: str, limit: int, what: str, hint: str | None = None) -> None:
    """One more per-minute bucket on top of the key's (e.g. per client address, per conversation).

    `bucket` names it (`tl:rl:<scope>:<ids>`, at most ~60 characters; ids that are random per
    object keep servers sharing one Redis apart); `what` ends the 429 message ("from this
    address"). The key's X-RateLimit-* headers stay on the answer unless this bucket refuses.
    0 turns the bucket off.
    """
    if not limit:
        return
    count, headers, reset, now = _window(bucket, limit)
    if count > limit:
        retry = max(1, int(reset - now + 0.999))
        headers = {**headers, "Retry-After": str(retry)}
        request.ratelimit_headers = headers
        raise RateLimited(f"Too many requests {what}: the limit is {limit} per minute.", hint=hint, headers=headers)


def incr_daily(bucket: str) -> tuple[int, int]:
    """Count one in `bucket`'s current UTC day: (count, seconds until the day ends)."""
    now = datetime.now(UTC)
    day_end = datetime(now.year, now.month, now.day, tzinfo=UTC) + timedelta(days=1)
    count = incr(f"{bucket}:{now:%Y%m%d}", 2 * 86400)
    return count, max(1, int((day_end - now).total_seconds() + 0.999))


def check_quota(request, key) -> None:
    project = key.project
    allowance = project.allowance_requests_per_month
    if allowance is None:
        return
    period = datetime.now(UTC).strftime("%Y-%m")
    with transaction.atomic():  # increment and read back under one lock, as in _incr_db
        updated = ProjectUsage.objects.filter(project=project, period=period).update(requests=F("requests") + 1)
        if not updated:
            try:
                with transaction.atomic():
                    ProjectUsage.objects.create(project=project, period=period, requests=1)
            except IntegrityError:
                ProjectUsage.objects.filter(project=project, period=period).update(requests=F("requests") + 1)
        used = ProjectUsage.objects.filter(project=project, period=period).values_list("requests", flat=True).first()
    if used and used > allowance:
        raise QuotaExceeded(
            f"The plan's allowance of {allowance} API requests per month is used up.",
            headers={"Retry-After": "3600"},
        )


class KeyRateThrottle(BaseThrottle):
    """Runs the rate limit and the plan allowance for every authenticated API request."""

    def allow_request(self, request, view):
        key = request.auth
        if key is None:
            return True
        check_rate(request._request, key)  # the Django request under DRF's wrapper
        check_quota(request._request, key)
        return True
