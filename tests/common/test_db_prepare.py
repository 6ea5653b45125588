"""Prepared statements on PostgreSQL (common.db.plain_cursor(prepare=True), THREADLESS_DB_PREPARE):
the hot routes' statements are parsed and planned once per connection, a bounded set of them, and
the switch turns it off (what it saves: PostgreSQL's planning cost per turn)."""

from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal

import psycopg
import pytest
from django.db import NotSupportedError, connection, transaction
from django.test import override_settings

from common.db import plain_cursor
from memories.services.statements import PREPARED_ROWS

pytestmark = pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's prepared statements")


def _prepared() -> dict[str, tuple[int, list[str]]]:
    """This connection's prepared statements on its backend: text -> (executions, parameter types)."""
    with connection.cursor() as cursor:  # Django's own cursor: binds client side, never prepared
        cursor.execute(
            "SELECT statement, generic_plans + custom_plans, parameter_types::text[] "
            "FROM pg_prepared_statements"
        )
        return {statement: (runs, types) for statement, runs, types in cursor.fetchall()}


def _turn(cast, memory_id: str, n: int, *, replies: int = 1, budget: int = 60000, **headers) -> None:
    """A turn through the API (the hot routes' handler): decorate one user message, report the reply."""
    decorate = cast.a.post(
        f"/v1/memories/{memory_id}/decorate",
        {"messages": [{"role": "user", "content": f"question {n}?"}], "budget_tokens": budget},
        format="json",
        **headers,
    )
    assert decorate.status_code == 200, decorate.content
    report = cast.a.post(
        f"/v1/memories/{memory_id}/report",
        {"messages": [{"role": "assistant", "content": f"answer {n}.{r}"} for r in range(replies)]},
        format="json",
    )
    assert report.status_code == 202, report.content


_KINDS = {
    "store": "WITH m AS (UPDATE memories_memory SET last_seq = last_seq + $1, last_turn",
    "report": "WITH m AS (UPDATE memories_memory SET last_seq = last_seq + $1, message_count",
    "reads": "WITH b AS MATERIALIZED (SELECT ",  # decorate's facts, window and failures: one statement
    "memory": "SELECT id, project_id, ",
}


def _hot(statements) -> dict[str, list[str]]:
    """The hot statements among `statements`, by what they are."""
    found: dict[str, list[str]] = {}
    for sql in statements:
        for kind, start in _KINDS.items():
            if sql.startswith(start):
                found.setdefault(kind, []).append(sql)
    return found


@pytest.mark.django_db
def test_the_hot_routes_statements_are_prepared_once_on_the_connections_backend(cast):
    assert connection.prepare_statements  # the default with persistent connections
    memory_id = cast.a.post("/v1/memories", {}, format="json").json()["id"]
    for n in range(3):
        _turn(cast, memory_id, n)
    prepared = _prepared()
    hot = _hot(prepared)
    assert set(hot) == {"store", "report", "reads"}, prepared
    assert all(len(texts) == 1 for texts in hot.values()), hot  # one statement each, reused
    assert all(prepared[sql][0] == 3 for texts in hot.values() for sql in texts), prepared
    types = prepared[hot["reads"][0]][1]
    assert "bigint" in types and "smallint" not in types, types  # integers as bigint whatever their size

    _turn(cast, memory_id, 3, HTTP_IDEMPOTENCY_KEY="turn-3")  # the memory is looked up first: prepared too
    prepared = _prepared()
    assert "memory" in _hot(prepared)
    # Larger numbers (a budget past smallint, sequence numbers that grow) reuse the same statements.
    for n in range(4, 8):
        _turn(cast, memory_id, n, budget=100_000 + n)
    again = _prepared()
    assert again.keys() == prepared.keys()
    assert again[hot["store"][0]][0] == 7 and again[hot["report"][0]][0] == 8


@pytest.mark.django_db
def test_statements_that_grow_with_their_rows_are_prepared_only_in_their_common_shapes(cast):
    memory_id = cast.a.post("/v1/memories", {}, format="json").json()["id"]
    for replies in range(1, PREPARED_ROWS + 3):
        _turn(cast, memory_id, replies, replies=replies)
    prepared = _prepared()
    assert (
        len(_hot(prepared)["report"]) == PREPARED_ROWS
    )  # one per shape up to PREPARED_ROWS replies, none past
    # Everything a connection may prepare stays under psycopg's limit, so none is evicted (entries.py).
    assert len(prepared) < connection.connection.prepared_max


@pytest.mark.django_db(transaction=True)
def test_the_switch_turns_preparing_off(cast):
    memory_id = cast.a.post("/v1/memories", {}, format="json").json()["id"]
    try:
        with override_settings(THREADLESS_DB_PREPARE=False):
            connection.close()  # the setting is read when a connection opens
            for n in range(3):
                _turn(cast, memory_id, n)
            assert not connection.prepare_statements
            assert _prepared() == {}
    finally:
        connection.close()
    _turn(cast, memory_id, 9)  # a new connection, with the setting back on
    assert _hot(_prepared()).keys() >= {"store", "report"}


def _setting(**env) -> str:
    """THREADLESS_DB_PREPARE as the settings module reads it from `env` (a fresh process)."""
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.THREADLESS_DB_PREPARE)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return out.stdout.strip()


def test_the_switch_is_read_from_the_environment_and_is_off_without_persistent_connections():
    assert _setting(THREADLESS_DB_PREPARE="0") == "False"
    assert (
        _setting(DB_CONN_MAX_AGE="0") == "False"
    )  # a new connection each request: preparing would cost more
    assert _setting(DB_CONN_MAX_AGE="0", THREADLESS_DB_PREPARE="1") == "True"
    assert _setting(DB_CONN_MAX_AGE="300") == "True"


@pytest.fixture
def probe(transactional_db):
    """A table of its own, changed by another session as a migration would."""
    admin = psycopg.connect(**connection.get_connection_params(), autocommit=True)
    admin.execute("DROP TABLE IF EXISTS prepare_probe")
    admin.execute("CREATE TABLE prepare_probe (a integer)")
    admin.execute("INSERT INTO prepare_probe VALUES (1), (2)")
    yield admin
    admin.execute("DROP TABLE IF EXISTS prepare_probe")
    admin.close()


def _probe_read() -> list:
    with plain_cursor(prepare=True) as cursor:
        cursor.execute("SELECT a FROM prepare_probe WHERE a >= %s ORDER BY a", [1])
        return cursor.fetchall()


def test_a_statement_whose_result_type_changed_is_prepared_again_in_autocommit(probe):
    assert _probe_read() == _probe_read() == [(1,), (2,)]
    assert "SELECT a FROM prepare_probe WHERE a >= $1 ORDER BY a" in _prepared()
    probe.execute("ALTER TABLE prepare_probe ALTER COLUMN a TYPE numeric")  # the result's type changes
    assert _probe_read() == [(Decimal(1),), (Decimal(2),)]  # sent again, prepared afresh: no error
    assert _probe_read() == [(Decimal(1),), (Decimal(2),)]


def test_a_stale_prepared_statement_in_a_transaction_fails_once_and_then_is_prepared_again(probe):
    assert _probe_read() == [(1,), (2,)]
    probe.execute("ALTER TABLE prepare_probe ALTER COLUMN a TYPE numeric")
    with pytest.raises(NotSupportedError, match="cached plan"), transaction.atomic():
        _probe_read()  # nothing to retry in an aborted transaction: the caller sees the error
    with transaction.atomic():
        assert _probe_read() == [(Decimal(1),), (Decimal(2),)]
    assert _probe_read() == [(Decimal(1),), (Decimal(2),)]


def test_a_stale_prepared_statement_in_a_pipeline_fails_once_and_then_is_prepared_again(probe):
    """As decorate's reads (memories.selectors.ContextReads): the error comes at the pipeline's sync,
    where it cannot be sent again; the connection's next prepared statement drops the stale ones."""

    def pipelined():
        with plain_cursor(prepare=True) as cursor:
            with connection.wrap_database_errors, connection.connection.pipeline():
                cursor.execute("SELECT a FROM prepare_probe WHERE a >= %s ORDER BY a", [1])
            return cursor.fetchall()

    assert pipelined() == [(1,), (2,)]
    probe.execute("ALTER TABLE prepare_probe ALTER COLUMN a TYPE numeric")
    with pytest.raises(NotSupportedError, match="cached plan"):
        pipelined()
    assert connection.stale_prepared
    assert pipelined() == [(Decimal(1),), (Decimal(2),)]
    assert not connection.stale_prepared


@pytest.mark.django_db
def test_a_statement_prepared_inside_a_rolled_back_savepoint_stays_usable(cast):
    """Prepared statements are the session's, not the transaction's: psycopg is not told of a savepoint's
    rollback (Django's cursor sends it, with preparing off) and need not be."""
    sql = "SELECT count(*) FROM memories_memory WHERE project_id = %s"

    def count():
        with plain_cursor(prepare=True) as cursor:
            cursor.execute(sql, [cast.project_a.pk])
            return cursor.fetchone()[0]

    with pytest.raises(ValueError), transaction.atomic():  # a savepoint inside the test's transaction
        assert count() == 0
        raise ValueError
    assert "SELECT count(*) FROM memories_memory WHERE project_id = $1" in _prepared()
    assert count() == 0
