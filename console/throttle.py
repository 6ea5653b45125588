"""Console sign-in throttle: failed attempts counted per account and per client address.

After THREADLESS_LOGIN_FAILURES_PER_ACCOUNT failed passwords for one user name, or
THREADLESS_LOGIN_FAILURES_PER_IP from one address, every further attempt (even with the right
password) is refused for THREADLESS_LOGIN_LOCKOUT_SECONDS after the last failure. Counters live
in the cache (Redis in production, so every web process shares them). A successful sign-in
clears its account's counter. The client address is REMOTE_ADDR: behind a proxy, run uvicorn
with --proxy-headers and the proxy's address in --forwarded-allow-ips (docs/deployment.md).
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.cache import cache

PREFIX = "tl:console-login:"


def _keys(request, username: str) -> tuple[str, str]:
    account = hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]
    address = (request.META.get("REMOTE_ADDR", "") if request is not None else "") or "unknown"
    return PREFIX + "account:" + account, PREFIX + "ip:" + address


def locked(request, username: str) -> bool:
    account, address = _keys(request, username)
    counts = cache.get_many([account, address])
    return (counts.get(account, 0) >= settings.THREADLESS_LOGIN_FAILURES_PER_ACCOUNT
            or counts.get(address, 0) >= settings.THREADLESS_LOGIN_FAILURES_PER_IP)


def record_failure(request, username: str) -> None:
    timeout = settings.THREADLESS_LOGIN_LOCKOUT_SECONDS
    for key in _keys(request, username):
        if cache.add(key, 1, timeout):
            continue
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.add(key, 1, timeout)
        cache.touch(key, timeout)  # the lock lasts from the last failure


def clear_account(request, username: str) -> None:
    cache.delete(_keys(request, username)[0])
