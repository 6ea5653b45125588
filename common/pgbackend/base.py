"""Django's PostgreSQL backend (psycopg 3), with a cheaper per-request health check.

With CONN_HEALTH_CHECKS, Django checks a persistent connection with `SELECT 1` at its first use in
every request: a round trip per request, most of them on a connection used a few milliseconds
before. Here a connection used within the last `HEALTH_CHECK_IDLE_SECONDS` (settings) is checked
by looking at its socket instead: a healthy idle connection has nothing to read, while a backend
that was terminated (pg_terminate_backend, a restart or a crash of the server) has sent its
error and closed the socket, so the socket is readable. Anything to read, or an idle time past
the window, runs Django's own check (`SELECT 1`), which closes a dead connection so the request
opens a new one. What only a round trip can find (a connection dropped silently on the network)
is found once the connection has sat idle past the window, as connection pools do (HikariCP's
alive-bypass window). Nothing else differs from Django's backend.
"""

from __future__ import annotations

import select
import time

from django.conf import settings
from django.db.backends.postgresql import base


def _has_input(fd: int) -> bool:
    """Whether the socket has anything to read (or is closed or in error), without waiting."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


class DatabaseWrapper(base.DatabaseWrapper):
    _used_at = 0.0  # time.monotonic() of the last health check this connection passed (or its connect)

    def connect(self) -> None:
        super().connect()
        self._used_at = time.monotonic()

    def close_if_health_check_failed(self) -> None:
        if self.pool or self.connection is None or not self.health_check_enabled or self.health_check_done:
            return super().close_if_health_check_failed()
        now = time.monotonic()
        try:
            quiet = not _has_input(self.connection.fileno())
        except (OSError, ValueError, self.Database.Error):  # no socket any more
            quiet = False
        if not quiet or now - self._used_at > settings.THREADLESS_DB_HEALTH_CHECK_IDLE:
            return super().close_if_health_check_failed()  # Django's check: SELECT 1, closed if it fails
        self.health_check_done = True
        self._used_at = now

    def is_usable(self) -> bool:
        usable = super().is_usable()
        if usable:
            self._used_at = time.monotonic()
        return usable
