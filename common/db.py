"""Database tuning that must hold for every connection, and the hot paths' plain statements."""

from __future__ import annotations

import contextlib
import functools
import re

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from psycopg import ClientCursor, Cursor
from psycopg.errors import FeatureNotSupported
from psycopg.pq import PipelineStatus, TransactionStatus

from common.writelock import writer_lock


def tune_sqlite(sender, connection, **kwargs) -> None:
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA busy_timeout = 20000")


_FORMAT_QMARK = re.compile(r"(?<!%)%s")
SERVER_BINDING_MAX_PARAMS = 65535  # PostgreSQL's protocol: at most this many parameters a statement


@functools.lru_cache(maxsize=512)
def _qmark(sql: str) -> str:
    # What Django's SQLite cursor does to every statement (`%s` → `?`, `%%` → `%`), once per text.
    return _FORMAT_QMARK.sub("?", sql).replace("%%", "%")


def _server_binding_cursor(db):
    """psycopg's own cursor on the connection, the parameters sent apart from the statement and bound
    by the server. Django's cursor binds them client side, quoting each into the SQL text in Python:
    about a fifth of decorate's CPU on PostgreSQL (py-spy), for statements of a dozen parameters or
    more. The time zone is set as Django's `create_cursor` sets it."""
    from django.db.backends.postgresql.base import TIMESTAMPTZ_OID
    from django.db.backends.postgresql.psycopg_any import register_tzloader
    from psycopg.pq import Format

    cursor = Cursor(db.connection)
    if db.timezone != db.connection.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT).timezone:
        register_tzloader(db.timezone, cursor)
    return cursor


def stale_plan(exc: BaseException) -> bool:
    """Whether a driver error is PostgreSQL refusing a prepared statement whose result columns
    changed type since it was prepared ("cached plan must not change result type")."""
    return isinstance(exc, FeatureNotSupported) and "cached plan" in (exc.diag.message_primary or "")


def _idle(conn) -> bool:
    """Whether a psycopg connection is in autocommit, outside any transaction and any pipeline."""
    return (
        conn.autocommit
        and conn.info.transaction_status == TransactionStatus.IDLE
        and conn.pgconn.pipeline_status == PipelineStatus.OFF
    )


@contextlib.contextmanager
def _preparing(conn):
    """psycopg's preparing switched on for the block (`prepare_threshold` 0), then back as it was."""
    threshold = conn.prepare_threshold
    conn.prepare_threshold = 0
    try:
        yield
    finally:
        conn.prepare_threshold = threshold


def _deallocate_all(cursor) -> None:
    """Drop every prepared statement of the cursor's connection, the server's and psycopg's record of
    them (psycopg clears its cache when it sees DEALLOCATE ALL succeed, while preparing is on)."""
    with _preparing(cursor.connection):
        cursor.execute("DEALLOCATE ALL", prepare=False)


class _DriverCursor:
    """The driver's own cursor with Django's error mapping around each call: see `plain_cursor`."""

    __slots__ = ("_db", "_cursor", "_sqlite", "_prepare")

    def __init__(self, db, prepare: bool = False) -> None:
        self._db = db
        self._sqlite = db.vendor == "sqlite"
        self._prepare = prepare and not self._sqlite and getattr(db, "prepare_statements", False)
        with db.wrap_database_errors:
            # SQLite: the driver's plain cursor (Django's own subclass rewrites placeholders on every
            # call); PostgreSQL: psycopg's own (`_server_binding_cursor`).
            self._cursor = db.connection.cursor() if self._sqlite else _server_binding_cursor(db)
            if self._prepare and db.stale_prepared and _idle(db.connection):
                _deallocate_all(self._cursor)  # before its statements (`stale_plan`; not inside a pipeline)
                db.stale_prepared = False

    def execute(self, sql: str, params=()) -> None:
        with self._db.wrap_database_errors:
            if self._sqlite:
                self._cursor.execute(_qmark(sql), params)
                return
            if len(params) > SERVER_BINDING_MAX_PARAMS and not isinstance(self._cursor, ClientCursor):
                # Past the protocol's limit for parameters sent apart (a large entries_append):
                # Django's cursor, which binds them into the text, for this and what follows.
                self._cursor.close()
                self._cursor = self._db.create_cursor()
                self._prepare = False
            if self._prepare:
                self._execute_prepared(sql, params)
            else:
                self._cursor.execute(sql, params)

    def _execute_prepared(self, sql: str, params) -> None:
        """The statement as a prepared one: parsed and planned once on this connection (Parse at its
        first use, one more round trip outside a pipeline), then only bound and executed.

        psycopg's automatic preparing (the connection's `prepare_threshold`) stays off, as Django
        sets it: with it on, psycopg counts every statement of every cursor to find the ones to
        prepare, keeping the text of the last `prepared_max` (100) of them, Django's client-bound
        ones with their literal values too (a bulk insert's megabytes), and drops everything at each
        savepoint rollback. So it is on only while one of these statements is sent, and the cache
        holds only them (`prepare=True`: prepared at once, whatever the threshold)."""
        conn = self._cursor.connection
        with _preparing(conn):
            try:
                self._cursor.execute(sql, params, prepare=True)
            except FeatureNotSupported as exc:
                # "cached plan must not change result type": a column this statement returns changed its
                # type since it was prepared (a migration, from another connection). PostgreSQL re-plans a
                # prepared statement after a schema change by itself but refuses one whose result changed,
                # and psycopg would go on reusing it. In autocommit, where nothing ran, the connection's
                # prepared statements are dropped and this one sent again (prepared afresh); inside a
                # transaction the error aborts it, and the cache is dropped before the next statement
                # (pgbackend's `stale_prepared`; a rollback drops it too).
                if not stale_plan(exc) or not _idle(conn):
                    raise
                _deallocate_all(self._cursor)
                self._cursor.execute(sql, params, prepare=True)

    def fetchone(self):
        with self._db.wrap_database_errors:
            return self._cursor.fetchone()

    def fetchall(self):
        with self._db.wrap_database_errors:
            return self._cursor.fetchall()

    def fetchmany(self, size: int):
        with self._db.wrap_database_errors:
            return self._cursor.fetchmany(size)

    @property
    def cursor(self):  # as Django's CursorWrapper names the driver's cursor
        return self._cursor

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._cursor.close()
        except self._db.Database.Error:
            pass


@contextlib.contextmanager
def sqlite_write_transaction(cursor, alias: str = DEFAULT_DB_ALIAS):
    """SQLite: the block's statements (on `cursor`, a `plain_cursor`) in one write transaction.

    In autocommit outside any atomic block, a transaction of its own: `BEGIN IMMEDIATE` (the
    mode Django's own BEGIN uses here, settings' transaction_mode) … the driver's commit, rolled
    back on any error. It is the transaction `transaction.atomic` would open, without the atomic
    block's bookkeeping and its two autocommit switches, which cost decorate's store and report
    more Python than their statements (docs/tuning/serving.md). Nothing
    else may run inside it (no savepoints, no on_commit callbacks: Django's transaction state is
    not told). Inside a caller's transaction it joins that one, with no savepoint."""
    db = connections[alias]
    own = db.autocommit and not db.in_atomic_block
    if not own:
        yield
        return
    lock = writer_lock(str(db.settings_dict["NAME"]))  # writers in line (common.writelock)
    with lock if lock is not None else contextlib.nullcontext():
        cursor.execute(f"BEGIN {db.transaction_mode or ''}".rstrip())
        try:
            yield
            with db.wrap_database_errors:
                db.connection.commit()
        except BaseException:
            if db.connection.in_transaction:
                with db.wrap_database_errors:
                    db.connection.rollback()
            raise


@contextlib.contextmanager
def write_atomic(alias: str = DEFAULT_DB_ALIAS):
    """`transaction.atomic()` for a write of many statements (an import), in line with the hot
    paths' writers on SQLite: the writers' lock (common.writelock) first, then BEGIN IMMEDIATE, so
    they wait for it on the flock and go in the moment it commits, rather than sleeping in
    SQLite's busy handler; and it waits its turn behind them the same way. Keep what runs inside
    to the statements themselves: every writer of the file waits for as long as the block lasts.
    Inside a caller's transaction it is a plain atomic block (the lock is the outer one's)."""
    db = connections[alias]
    db.ensure_connection()
    own = db.vendor == "sqlite" and db.autocommit and not db.in_atomic_block
    lock = writer_lock(str(db.settings_dict["NAME"])) if own else None
    with lock if lock is not None else contextlib.nullcontext(), transaction.atomic(using=alias):
        yield


def plain_cursor(alias: str = DEFAULT_DB_ALIAS, *, prepare: bool = False):
    """A cursor for the write and read paths' plain statements (`%s` placeholders, as Django's).

    `prepare`: its statements are prepared on PostgreSQL (when THREADLESS_DB_PREPARE is on): for
    the hot path's statements of a fixed text, a few per call site, so that a connection holds a
    bounded set of them (well under psycopg's `prepared_max`, 100, so none is ever evicted).
    Statements whose text grows with their rows are prepared only for their few common shapes.

    Django's cursor wrapper costs ~9 µs a statement on SQLite (the wrapper objects, the debug and
    execute-wrapper hooks, the placeholder rewrite by regex on every call): a third of a plain
    indexed read, and decorate and report are a few statements each. This is the driver's cursor
    on the same connection and transaction, with the same checks first (the health check, the
    thread and broken-transaction checks) and Django's exception mapping; whenever anything
    watches the statements (DEBUG, `CaptureQueriesContext`, an `execute_wrapper`), Django's own
    cursor, so what is logged and counted is unchanged."""
    db = connections[alias]
    if db.queries_logged or db.execute_wrappers or db.vendor not in ("sqlite", "postgresql"):
        return db.cursor()
    db.close_if_health_check_failed()
    db.ensure_connection()
    db.validate_thread_sharing()
    db.validate_no_broken_transaction()
    return _DriverCursor(db, prepare)
