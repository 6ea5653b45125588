"""Per-key rate limits and per-project plan allowances, correct across processes.

Besides the per-key bucket (`check_rate`), callers add their own buckets with `check_bucket`
(the end-user routes: per client address and per conversation) and daily counters with
`incr_daily` (an agent's end-user turn budget); all share the one atomic `incr`.

Counters are atomic and never touch the application database (common.counters): Redis INCR
in production, an UPSERT in the embedded default's own counter file. Never read-modify-write.
A request's key bucket and plan count go to the store together, in one round trip.

`request` is always the Django request (under DRF: `request._request`, in `KeyRateThrottle` only);
a limit's X-RateLimit-* headers go on `request.ratelimit_headers`, which the middleware adds to
every answer.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from django.conf import settings
from rest_framework.throttling import BaseThrottle

from common import counters
from common.errors import QuotaExceeded, RateLimited
from projects import auth, usage
from projects.models import ApiKey

WINDOW_SECONDS = 60


def incr(bucket: str, ttl: int) -> int:
    """One atomic increment in the counter store (common.counters): Redis or the counter file."""
    return counters.incr(bucket, ttl)


def rate_limit_for(project) -> int:
    if project.rate_limit_per_minute is not None:
        return project.rate_limit_per_minute
    return settings.THREADLESS_RATE_LIMIT_PER_MINUTE


def _window_item(bucket: str) -> tuple[tuple[str, int, bool], float, float]:
    now = time.time()
    window = int(now // WINDOW_SECONDS)
    return (f"{bucket}:{window}", WINDOW_SECONDS * 2, False), (window + 1) * WINDOW_SECONDS, now


def _headers(limit: int, count: int, reset: float) -> dict:
    return {
        "X-RateLimit-Limit": str(limit),
        "X-RateLimit-Remaining": str(max(0, limit - count)),
        "X-RateLimit-Reset": str(reset),
    }


def _window(bucket: str, limit: int) -> tuple[int, dict, float, float]:
    """Count one request in `bucket`'s current fixed window: (count, headers, reset, now)."""
    (key, ttl, _), reset, now = _window_item(bucket)
    count = incr(key, ttl)
    return count, _headers(limit, count, reset), reset, now


def _rate_verdict(request, limit: int, count: int, reset: float, now: float) -> None:
    headers = _headers(limit, count, reset)
    request.ratelimit_headers = headers
    if count > limit:
        retry = max(1, int(reset - now + 0.999))
        raise RateLimited(
            f"Too many requests for this key: the limit is {limit} per minute.",
            headers={**headers, "Retry-After": str(retry)},
        )


def _quota_verdict(allowance: int, used: int) -> None:
    if used > allowance:
        raise QuotaExceeded(
            f"The plan's allowance of {allowance} API requests per month is used up.",
            headers={"Retry-After": "3600"},
        )


def _items(key, also=()) -> tuple[list, int, int | None, float, float]:
    project = key.project
    limit = rate_limit_for(project)
    allowance = project.allowance_requests_per_month
    items, reset, now = [], 0.0, 0.0
    if limit:
        # The lookup prefix is random per key, so servers sharing one Redis never share a bucket.
        rate_item, reset, now = _window_item(f"tl:rl:{key.lookup}")
        items.append(rate_item)
    # Every request counts toward the month, allowance or not: the allowance only decides
    # whether the count is enforced, and the console shows the count either way.
    items.append(usage.plan_item(project.pk))
    items.extend(also)
    return items, limit, allowance, reset, now


def check_rate_and_quota(request, key) -> ApiKey:
    """The key's per-minute bucket and the project's monthly plan count, in one round trip, which
    also reads the key generation when the key came from the cache unchecked (projects.auth:
    `confirm`); the key it returns is the confirmed one.

    A key that changed since it was cached is read again and checked, and what this round trip
    counted for it is taken back first (a revoked key's request counts for nothing). The plan
    count is the live total in the counter store (exact across processes); its database copy
    (ProjectUsage) is written by the periodic flush (projects.usage).
    """
    return check_and_count(request, key)[0]


def check_and_count(request, key, also=()) -> tuple[ApiKey, list[int]]:
    """`check_rate_and_quota`, counting the items `also` (counter items: e.g. the operation's
    volume, projects.usage.operation_item) in the same round trip: (the key, their counts).

    A refused request (429) has `also` taken back before the error is raised; a request that
    fails later is the caller's to take back (`counters.decr_many`).

    `request` is the Django request, or any object with its `META["HTTP_AUTHORIZATION"]`,
    `api_key`, `key_unconfirmed` and `ratelimit_headers` (memories.api.hot).
    """
    items, limit, allowance, reset, now = _items(key, also)
    cached_in = getattr(request, "key_unconfirmed", None)
    if cached_in is not None:
        generation, counts = counters.read_and_incr(auth.GENERATION, items)
        if generation != cached_in:  # a key or project changed: uncount, check again, recount
            if items:
                counters.decr_many([item[0] for item in items])
            key = auth.confirm(request, generation)  # 401 if it is revoked or gone
            items, limit, allowance, reset, now = _items(key, also)
            counts = counters.incr_many(items) if items else []
        else:
            auth.confirm(request, generation)
    else:
        counts = counters.incr_many(items) if items else []
    extra = len(also)
    try:
        if limit:
            _rate_verdict(request, limit, counts[0], reset, now)
        if allowance is not None:
            plan = len(items) - extra - 1
            _quota_verdict(allowance, usage.seeded(items[plan][0], counts[plan]))
    except (RateLimited, QuotaExceeded):
        if also:
            counters.decr_many([item[0] for item in also])
        raise
    return key, counts[len(counts) - extra :]


def check_rate(request, key) -> None:
    limit = rate_limit_for(key.project)
    if not limit:
        return
    (bucket, ttl, _), reset, now = _window_item(f"tl:rl:{key.lookup}")
    _rate_verdict(request, limit, incr(bucket, ttl), reset, now)


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
        raise RateLimited(
            f"Too many requests {what}: the limit is {limit} per minute.", hint=hint, headers=headers
        )


def incr_daily(bucket: str) -> tuple[int, int]:
    """Count one in `bucket`'s current UTC day: (count, seconds until the day ends)."""
    now = datetime.now(UTC)
    day_end = datetime(now.year, now.month, now.day, tzinfo=UTC) + timedelta(days=1)
    count = incr(f"{bucket}:{now:%Y%m%d}", 2 * 86400)
    return count, max(1, int((day_end - now).total_seconds() + 0.999))


def check_quota(request, key) -> None:
    """Count the request in the project's month; refuse it when the plan allowance is used up."""
    allowance = key.project.allowance_requests_per_month
    item = usage.plan_item(key.project.pk)
    used = usage.seeded(item[0], counters.incr_many([item])[0])
    if allowance is not None:
        _quota_verdict(allowance, used)


class KeyRateThrottle(BaseThrottle):
    """Runs the rate limit and the plan allowance for every authenticated API request, and
    confirms a cached key in the same round trip (`confirms_key`: projects.auth)."""

    confirms_key = True

    def allow_request(self, request, view):
        key = request.auth
        if key is None:
            return True
        confirmed = check_rate_and_quota(request._request, key)  # the Django request under DRF's wrapper
        if confirmed is not key:
            request.auth = confirmed  # the row read again (a changed project's limits, for one)
        return True
