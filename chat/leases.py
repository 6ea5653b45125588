"""Turn leases: a running turn holds a lease that this process renews, so a turn whose process
died reads as EXECUTION_INTERRUPTED once its lease runs out (`Turn.lease_expired`).

One small thread per process renews every turn the process holds (`turn_leases`), rather than one
thread per turn: holding a lease costs a set insert, not a thread start."""

from __future__ import annotations

import logging
import os
import threading
import time
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from memories.models import DEFAULT_THREAD, Turn

log = logging.getLogger("threadless.chat")


def lease_seconds() -> int:
    return int(settings.THREADLESS_TURN_LEASE_SECONDS)


def lease_deadline():
    """When a lease taken or renewed now runs out (`Turn.lease_expired` reads it back)."""
    return timezone.now() + timedelta(seconds=lease_seconds())


class Leases:
    """Renews the lease of every turn this process is running, from one thread per process
    (started on first use, again after a fork), every third of the lease: a dead process stops
    renewing, so its turns read as interrupted. Holding a lease costs a set insert, not a thread
    start per turn."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, str, int], int] = {}
        self._lock = threading.Lock()
        self._pid = 0

    def hold(self, memory_id: str, turn: int, thread: str = DEFAULT_THREAD) -> tuple[str, str, int]:
        key = (memory_id, thread, turn)
        with self._lock:
            self._held[key] = self._held.get(key, 0) + 1
            if self._pid != os.getpid():
                self._pid = os.getpid()
                threading.Thread(target=self._run, daemon=True, name="turn-leases").start()
        return key

    def release(self, key: tuple[str, str, int]) -> None:
        with self._lock:
            left = self._held.get(key, 0) - 1
            if left > 0:
                self._held[key] = left
            else:
                self._held.pop(key, None)

    def renew(self) -> int:
        """Push every held lease forward now; returns how many turns were renewed."""
        with self._lock:
            held = list(self._held)
        renewed = 0
        for memory_id, thread, turn in held:
            try:
                renewed += Turn.objects.filter(
                    memory_id=memory_id, thread=thread, number=turn, state=Turn.State.IN_PROGRESS
                ).update(lease_expires_at=lease_deadline())
            except Exception:  # noqa: BLE001 - a missed renewal only risks an early "interrupted" read
                log.warning("lease renewal failed for %s/%s turn %s", memory_id, thread, turn, exc_info=True)
        return renewed

    def _run(self) -> None:
        while True:
            time.sleep(max(1.0, lease_seconds() / 3))
            if self._held:
                self.renew()
                connection.close()


turn_leases = Leases()  # this process's
