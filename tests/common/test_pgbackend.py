"""PostgreSQL's per-request connection health check (common.pgbackend): no round trip for a
connection in steady use, Django's `SELECT 1` past the idle window, and a terminated backend
replaced before the next request runs (persistent connections, health-checked)."""

from __future__ import annotations

import time

import orjson
import psycopg
import pytest
from django.conf import settings
from django.core import signals
from django.db import DEFAULT_DB_ALIAS, connection, connections

from common.pgbackend import base as pgbackend
from harness.pgtrace import round_trips

pytestmark = [
    pytest.mark.django_db(transaction=True),  # real commits and Django's request-end connection upkeep
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the PostgreSQL backend's health check"),
]


def _request(sql: str = "SELECT 2"):
    """What a request does with the database: one statement inside Django's request signals
    (close_old_connections before and after, as the hot routes' `_hot_call` and Django's handlers)."""
    signals.request_started.send(sender=None)
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return cursor.fetchone()[0]
    finally:
        signals.request_finished.send(sender=None)


def _terminate_backend() -> int:
    """End this connection's server process from another session, as an admin or a restart
    would, and wait until its last words reach the socket. Answers the ended backend's pid."""
    pid = connection.connection.info.backend_pid
    with psycopg.connect(**connection.get_connection_params(), autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)
    deadline = time.monotonic() + 10
    while not pgbackend._has_input(connection.connection.fileno()):
        assert time.monotonic() < deadline, "the terminated backend's socket never became readable"
        time.sleep(0.01)
    return pid


def test_the_postgresql_connection_is_the_health_checking_backend():
    assert isinstance(connections[DEFAULT_DB_ALIAS], pgbackend.DatabaseWrapper)
    assert connection.health_check_enabled


def test_a_connection_in_steady_use_is_checked_without_a_round_trip():
    _request()
    trips = round_trips(connection, lambda: (_request(), _request()))
    assert trips == [['"SELECT 2"'], ['"SELECT 2"']]


def test_a_connection_idle_past_the_window_is_checked_with_select_1():
    _request()
    connection._used_at -= settings.THREADLESS_DB_HEALTH_CHECK_IDLE + 1  # as if it sat idle that long
    trips = round_trips(connection, _request)
    assert trips == [['"SELECT 1"'], ['"SELECT 2"']]
    assert round_trips(connection, _request) == [['"SELECT 2"']]  # used again just now: no check


def test_a_terminated_backend_is_replaced_before_the_next_request_runs():
    _request()
    ended = _terminate_backend()
    assert _request() == 2
    assert connection.connection.info.backend_pid != ended


def test_a_decorate_after_the_backend_was_terminated_still_succeeds(cast):
    from threadless_site import asgi

    memory_id = cast.a.post("/v1/memories", {}, format="json").json()["id"]
    headers = {"authorization": f"Bearer {cast.key_a}", "content-type": "application/json"}

    def decorate(text: str):
        body = orjson.dumps({"messages": [{"role": "user", "content": text}]})
        path = f"/v1/memories/{memory_id}/decorate"
        scope = {"type": "http", "method": "POST", "path": path, "headers": [], "query_string": b""}
        return asgi._hot_call(
            scope, asgi.hot.route(path), headers, body, "req-test"
        )  # the hot route's thread side

    assert decorate("before")[0] == 200
    ended = _terminate_backend()
    status, _headers, body = decorate("after")
    assert status == 200, body
    assert orjson.loads(body)["messages"][-1]["content"] == "after"
    assert connection.connection.info.backend_pid != ended
    if (
        connection.prepare_statements
    ):  # the statements the ended backend had prepared, prepared again on the new one
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_prepared_statements")
            assert cursor.fetchone()[0] >= 2  # decorate's store and its reads (one statement)
