"""One SQLite file's writers, in line: an exclusive `flock` on a side file, taken before the write.

SQLite lets one writer in at a time and makes the others wait in its busy handler, which sleeps
1, 2, 5, 10 … ms between tries (sqlite3's default handler behind `busy_timeout`). A write on the
hot path takes ~10–100 µs, so a writer that finds the lock taken sleeps 10–100 times longer than
it had to wait; under load on the embedded default that is ~10 % of a web process's time
(measured in docs/tuning/serving.md). A writer that first takes this lock is woken by the
kernel the moment the holder lets go, and then finds SQLite's lock free.

The wait is bounded: a holder that never lets go (a stuck or hostile process that can open the
lock file) makes the write fail after THREADLESS_WRITE_LOCK_TIMEOUT seconds with
`WriteLockTimeout`, a database OperationalError, so the API answers 503 in its error shape
instead of hanging. Linux has no timed flock, so a writer that finds the lock taken polls it
without blocking, first every ~20 µs and backing off to every 1 ms: a write on the hot path holds
it for ~10–100 µs, so a waiter still goes in within a poll of the holder letting go.

The lock only orders writers that take it: SQLite's own lock still guards the file, so a writer
that doesn't (a Django `atomic` block, another program) stays correct and merely waits SQLite's
way. One open file per thread and process: threads exclude each other as processes do (a flock
belongs to the open file, which a forked child would otherwise share with its parent). The
kernel drops a dead process's lock.

Low level on purpose: no imports from the apps (it lives in `common/`).
"""

from __future__ import annotations

import fcntl
import functools
import os
import threading
import time

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import OperationalError

FIRST_POLL = 0.00002
LAST_POLL = 0.001


def _default_timeout() -> float:
    try:
        return float(settings.THREADLESS_WRITE_LOCK_TIMEOUT)
    except (ImproperlyConfigured, AttributeError):  # outside Django (a benchmark's floor)
        return 5.0


class WriteLockTimeout(OperationalError):
    """The writers' lock stayed taken past THREADLESS_WRITE_LOCK_TIMEOUT (503, like a locked database)."""


class WriterLock:
    """`with lock:` holds it (a context manager of its own, not a generator: this is on every
    request's path)."""

    def __init__(self, path: str, timeout: float | None = None) -> None:
        self.path = path + ".lock"
        self.timeout = timeout
        self._local = threading.local()

    def __enter__(self) -> None:
        local = self._local
        if getattr(local, "pid", None) != os.getpid():
            local.file = open(self.path, "ab")  # noqa: SIM115 - the thread's, closed with it
            local.fd, local.pid = local.file.fileno(), os.getpid()
        try:
            fcntl.flock(local.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._wait(local.fd)

    def _wait(self, fd: int) -> None:
        timeout = self.timeout if self.timeout is not None else _default_timeout()
        deadline = time.monotonic() + timeout
        delay = FIRST_POLL
        while True:
            time.sleep(delay)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise WriteLockTimeout(
                        f"the database's write lock stayed taken for {timeout:g} s"
                    ) from None
                delay = min(delay * 1.5, LAST_POLL)

    def __exit__(self, *exc) -> None:
        fcntl.flock(self._local.fd, fcntl.LOCK_UN)


@functools.lru_cache(maxsize=16)
def writer_lock(path: str) -> WriterLock | None:
    """The writers' lock of the SQLite database file at `path`; None for an in-memory database."""
    if not path or path == ":memory:" or "mode=memory" in path:
        return None
    return WriterLock(os.path.abspath(path))
