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
alive-bypass window).

With `THREADLESS_DB_PREPARE` (settings), a connection also sends Python integers as `bigint`
parameters when the server binds them (`common.db.plain_cursor`): psycopg otherwise picks
`smallint`, `integer` or `bigint` by each value's size, and a prepared statement is one per
statement text *and* parameter types, so a growing sequence number or a larger budget would
prepare the same statement again. Django's own cursors bind client side, where an integer is
the same literal whatever its dumper. Nothing else differs from Django's backend.
"""

from __future__ import annotations

import select
import time

from django.conf import settings
from django.db.backends.postgresql import base
from django.db.utils import DatabaseErrorWrapper
from django.utils.functional import cached_property
from psycopg.types.numeric import Int8BinaryDumper, Int8Dumper

from common.db import stale_plan


def _has_input(fd: int) -> bool:
    """Whether the socket has anything to read (or is closed or in error), without waiting."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


class _ErrorWrapper(DatabaseErrorWrapper):
    """Django's error mapping, noting a stale prepared statement on the way (see `stale_prepared`)."""

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_value is not None and stale_plan(exc_value):
            self.wrapper.stale_prepared = True
        return super().__exit__(exc_type, exc_value, traceback)


class DatabaseWrapper(base.DatabaseWrapper):
    _used_at = 0.0  # time.monotonic() of the last health check this connection passed (or its connect)
    prepare_statements = (
        False  # whether common.db.plain_cursor prepares its fixed statements (per connection)
    )
    # A prepared statement failed as stale (`stale_plan`) where it could not be sent again at once (in a
    # pipeline, or a transaction): common.db.plain_cursor drops the connection's prepared statements
    # before its next one, since psycopg would go on reusing the stale one.
    stale_prepared = False

    @cached_property
    def wrap_database_errors(self):
        return _ErrorWrapper(self)

    def get_new_connection(self, conn_params):
        connection = super().get_new_connection(conn_params)
        self.prepare_statements = settings.THREADLESS_DB_PREPARE
        self.stale_prepared = False
        if self.prepare_statements:
            connection.adapters.register_dumper(int, Int8Dumper)
            connection.adapters.register_dumper(int, Int8BinaryDumper)  # the last one is `%s`'s
        return connection

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
