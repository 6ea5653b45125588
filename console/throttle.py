"""Console sign-in throttle: failed attempts counted per account and per client address.

After THREADLESS_LOGIN_FAILURES_PER_ACCOUNT failed passwords for one user name, or
THREADLESS_LOGIN_FAILURES_PER_IP from one address, within THREADLESS_LOGIN_LOCKOUT_SECONDS, every
further attempt (even with the right password) is refused until those failures are older than
that. The account is the name as sign-in reads it (Unicode NFKC, as Django normalises user
names) and case-folded, so `ｍallory` (fullwidth m) or `MALLORY` count against `mallory`.

Counts live in the counter store (common.counters: Redis in production, else a SQLite file of
its own), where the rate limits keep theirs, so every web process shares them and no table
beyond `migrate`'s is needed. Each count covers one window of THREADLESS_LOGIN_LOCKOUT_SECONDS
(the window is in the key: stored counts never expire early); the lock looks at this window and
the one before. A successful sign-in clears its account's counts. The client address is
REMOTE_ADDR: behind a proxy, run uvicorn with --proxy-headers and the proxy's address in
--forwarded-allow-ips (docs/deployment.md).
"""

from __future__ import annotations

import hashlib
import time
import unicodedata

from django.conf import settings

from common import counters

PREFIX = "tl:console-login:"


def account_name(username: str) -> str:
    """The name the throttle counts: NFKC (as sign-in normalises it), stripped, case-folded."""
    return unicodedata.normalize("NFKC", username or "").strip().casefold()


def _windows() -> tuple[int, int]:
    span = max(1, settings.THREADLESS_LOGIN_LOCKOUT_SECONDS)
    now = int(time.time() // span)
    return now, now - 1


def _bases(request, username: str) -> tuple[str, str]:
    account = hashlib.sha256(account_name(username).encode()).hexdigest()[:32]
    address = (request.META.get("REMOTE_ADDR", "") if request is not None else "") or "unknown"
    return PREFIX + "account:" + account, PREFIX + "ip:" + address


def locked(request, username: str) -> bool:
    account, address = _bases(request, username)
    now, before = _windows()
    counts = counters.get_many(
        [f"{account}:{now}", f"{account}:{before}", f"{address}:{now}", f"{address}:{before}"]
    )
    return (
        counts[0] + counts[1] >= settings.THREADLESS_LOGIN_FAILURES_PER_ACCOUNT
        or counts[2] + counts[3] >= settings.THREADLESS_LOGIN_FAILURES_PER_IP
    )


def record_failure(request, username: str) -> None:
    ttl = 2 * max(1, settings.THREADLESS_LOGIN_LOCKOUT_SECONDS)
    now, _ = _windows()
    counters.incr_many([(f"{base}:{now}", ttl, False) for base in _bases(request, username)])


def clear_account(request, username: str) -> None:
    account = _bases(request, username)[0]
    counters.delete_many([f"{account}:{window}" for window in _windows()])
