"""The bounded pool streamed turns run on: one per process, `THREADLESS_STREAM_WORKERS` threads.

A streamed turn runs on its own thread so that a client going away cancels nothing; the pool
bounds those threads, so many streams at once cannot start threads without limit. Callers
`reserve()` a slot *before* beginning the turn, so a full pool is a clean 503 (nothing stored)
rather than a turn waiting in a queue while its lease runs out:

    slot = turnpool.reserve()              # Unavailable (503, Retry-After) when every worker is busy
    try:
        handle = runner.turn_begin(...)
    except BaseException:
        slot.release()
        raise
    slot.run(work)                         # on a pool thread; the slot is freed when work ends

Worker threads are joined at interpreter exit (as the former non-daemon threads were), so a
shutting-down server still lets a running turn reach its end.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from django.conf import settings

from common.errors import Unavailable

log = logging.getLogger("threadless.chat")

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_executor_size = 0
_busy = 0


def size() -> int:
    return max(1, int(settings.THREADLESS_STREAM_WORKERS))


def busy() -> int:
    """Slots held right now (reserved or running) in this process."""
    return _busy


def _pool() -> ThreadPoolExecutor:
    global _executor, _executor_size
    wanted = size()
    with _lock:
        if _executor is None or _executor_size != wanted:
            old = _executor
            _executor = ThreadPoolExecutor(max_workers=wanted, thread_name_prefix="turn")
            _executor_size = wanted
            if old is not None:
                old.shutdown(wait=False)  # its running turns finish; new ones go to the new pool
        return _executor


class Slot:
    """One reserved worker; released exactly once (by `run`'s work ending, or by `release`)."""

    def __init__(self) -> None:
        self._held = True

    def release(self) -> None:
        global _busy
        with _lock:
            if self._held:
                self._held = False
                _busy -= 1

    def run(self, work: Callable[[], None]) -> Future:
        def task() -> None:
            try:
                work()
            finally:
                self.release()

        try:
            return _pool().submit(task)
        except BaseException:
            self.release()
            raise


def reserve(*, refuse: bool = True) -> Slot:
    """A slot on the pool; with `refuse` (the default) a 503 when all `size()` are taken.

    `refuse=False` is for a turn that has already begun: it always gets a slot, and its work
    waits in the pool's queue if every thread is busy.
    """
    global _busy
    limit = size()
    with _lock:
        if refuse and _busy >= limit:
            raise Unavailable(
                f"The server is running as many streamed turns as it can ({limit} per process); "
                "try again in a moment.",
                hint="Retry after the number of seconds in Retry-After.",
                headers={"Retry-After": "2"},
            )
        _busy += 1
    return Slot()
