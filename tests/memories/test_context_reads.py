"""decorate's reads (memories.selectors.ContextReads): the facts, the window and the failures in one
statement (on SQLite when the first range holds every message), and the same context as when each
is read on its own.

On PostgreSQL the failures are read before the window is known, from the lowest turn the
window's first range read holds (turn 0 when that range holds every message); these cases make
that read miss (more failures than its limit in turns older than the window, a window longer
than its first range read) and check that the context is still the one the reads one by one
give. On SQLite the read ahead is made only when the first range holds every message (the
failures from turn 0, the window whole); otherwise each read runs when asked.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from common.messages import entry_fields
from harness.pgtrace import round_trips
from memories.context import context_build
from memories.selectors import FAILURES_LIMIT, ContextReads, memory_get, window_first_chunk
from memories.selectors.sql import postgresql_reads_ahead_sql, sqlite_reads_ahead_sql
from memories.services import entries_append, fact_create, memory_create, memory_decorate, memory_lock

pytestmark = pytest.mark.django_db
on_postgresql = pytest.mark.skipif(connection.vendor != "postgresql", reason="round trips are PostgreSQL's")
on_sqlite = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's query plan")


def _one_by_one(patched) -> None:
    """Every read of ContextReads when asked, none ahead (either backend)."""
    patched.setattr(ContextReads, "_read_ahead", lambda self, db, new_turn: None)
    patched.setattr(ContextReads, "_read_ahead_sqlite", lambda self: None)


def _memory(cast, turns: list[tuple[str, str, int]]):
    """A memory of (user text, assistant text, failures) turns: each failure a committed raw
    error entry of that turn (the failures block shows them when the policy keeps raw errors)."""
    memory, _ = memory_create(project=cast.project_a)
    items = []
    for number, (user, assistant, failures) in enumerate(turns, start=1):
        items += [
            entry_fields({"role": "user", "content": user}),
            entry_fields({"role": "assistant", "content": assistant}),
        ]
        items += [
            {"kind": "error", "task_id": f"task-{number}-{i}", "content": f"turn {number} failure {i}"}
            for i in range(failures)
        ]
    with transaction.atomic():
        entries_append(memory=memory_lock(memory), items=items)
    fact_create(memory=memory, text="The user's dog is called Biscuit.")
    fact_create(memory=memory, text="The user lives in Lisbon.")
    return memory_get(project=cast.project_a, memory_id=memory.id)


def _build(memory, budget: int, recall: bool = True):
    return context_build(
        memory=memory,
        new_messages=[{"role": "user", "content": "What is my dog called?"}],
        budget_tokens=budget,
        recall=recall,
        before_seq=None,
        new_turn=memory.last_turn + 1,
    )


def _words(n: int, seed: int) -> str:
    return " ".join(f"w{(seed * 31 + i) % 997}" for i in range(n))


CASES = {
    # Every turn fits; a few failures: the read ahead holds them all.
    "the whole history and its failures": ([(_words(8, t), _words(12, t), 1) for t in range(10)], 60_000),
    # More failures than the read's limit in turns older than the window: it must read again.
    "more failures than the limit before the window": (
        [(_words(40, t), _words(60, t), 3 if t < 30 else 1) for t in range(40)],
        1_500,
    ),
    # Long old messages, short new ones: the window outgrows its first range read (sized from the
    # memory's average message) and starts at a turn older than any that read saw.
    "a window longer than its first range read": (
        [(_words(600, t), _words(600, t), 1) for t in range(40)] + [("ok", "fine", 1) for _ in range(120)],
        30_000,
    ),
    # A budget just under the history: the first range read (sized from the average message) holds
    # every message, so the failures are read from turn 0, and the window, shorter than the memory,
    # starts after turns whose failures fill that read's limit: it must read again.
    "a window shorter than a first range that holds every message": (
        [(_words(40, t), _words(60, t), 3 if t < 30 else 1) for t in range(40)],
        5_000,
    ),
    # No history fits: the failures block shows the new turn's (there are none yet).
    "an empty window": ([(_words(300, t), _words(300, t), 2) for t in range(5)], 40),
}


@pytest.mark.parametrize("case", CASES)
def test_the_context_is_the_one_the_reads_one_by_one_give(cast, monkeypatch, case):
    turns, budget = CASES[case]
    memory = _memory(cast, turns)
    ahead = asdict(_build(memory, budget))
    with monkeypatch.context() as patched:
        _one_by_one(patched)
        one_by_one = asdict(_build(memory, budget))
    assert ahead == one_by_one
    assert [f["text"] for f in ahead["facts"]][:1] == ["The user's dog is called Biscuit."]
    if case != "an empty window":
        assert ahead["history_count"] > 0 and "failure" in ahead["context_text"]


def test_the_failures_are_read_again_only_when_the_read_ahead_could_miss_one(cast, monkeypatch):
    many = _memory(cast, CASES["more failures than the limit before the window"][0])
    few = _memory(cast, CASES["the whole history and its failures"][0])

    def statements(memory, budget):
        with CaptureQueriesContext(connection) as ctx:
            _build(memory, budget, recall=False)  # the recall block's index reads are not these
        return len(ctx.captured_queries)

    ahead = {"few": statements(few, 60_000), "many": statements(many, 1_500)}
    with monkeypatch.context() as patched:
        _one_by_one(patched)
        one_by_one = {"few": statements(few, 60_000), "many": statements(many, 1_500)}
    assert one_by_one["few"] == 3  # facts, window, failures
    assert ahead["few"] == 1
    # The read ahead stopped at its limit in turns before the window: read again, at each of the
    # two failures reads (the second after the window was read again to make room for the block).
    assert FAILURES_LIMIT < 3 * 30
    assert one_by_one["many"] == 5
    # (SQLite reads ahead only when the first range holds every message: not this memory's.)
    assert ahead["many"] == (4 if connection.vendor == "postgresql" else 5)


@on_postgresql
def test_decorate_is_two_round_trips_on_postgresql_its_store_and_its_reads(cast):
    memory = _memory(cast, CASES["the whole history and its failures"][0])
    stub = type(memory)(id=memory.id, project=cast.project_a)  # what the hot route passes: scoped, unread
    answer = {}

    def decorate():
        answer.update(
            memory_decorate(memory=stub, messages=[{"role": "user", "content": "Hello again"}], scoped=True)
        )

    first = round_trips(connection, decorate)
    trips = round_trips(connection, decorate)
    assert len(trips) == 2, trips
    store, reads = trips
    assert len(store) == 1 and store[0].startswith('"WITH m AS (UPDATE')
    assert len(reads) == 1 and reads[0].startswith('"WITH b AS MATERIALIZED'), reads
    assert answer["context"]["facts"] and "failure" in answer["context_text"]
    if connection.prepare_statements:
        # A connection's first decorate prepares its two statements (common.db.plain_cursor): each
        # Parse is a round trip of its own, once per connection.
        assert len(first) == 4, first
        assert first[0] == [f"prepare {store[0]}"] and first[1] == store
        assert first[2] == [f"prepare {reads[0]}"] and first[3] == reads
    else:
        assert first == trips


@on_postgresql
def test_a_dry_run_decorate_reads_in_one_round_trip_on_postgresql(cast):
    memory = _memory(cast, CASES["the whole history and its failures"][0])
    trips = round_trips(
        connection,
        lambda: memory_decorate(
            memory=memory, messages=[{"role": "user", "content": "Hello again"}], store=False
        ),
    )
    # (its first use on the connection prepares it, a round trip of its own, once per connection)
    assert [statements for statements in trips if not statements[0].startswith("prepare ")] == [trips[-1]], (
        trips
    )
    assert len(trips[-1]) == 1, trips


def _reads_ahead(memory, budget: int) -> list[str]:
    """The statements of decorate's reads' first round trip (PostgreSQL)."""
    trips = round_trips(connection, lambda: _build(memory, budget, recall=False))
    return [s.removeprefix("prepare ") for s in trips[0]]


@on_postgresql
def test_the_failures_are_read_from_turn_0_when_the_first_range_holds_every_message(cast):
    # The bound's read of the window's index is left out: a turn is never below 0.
    few = _memory(cast, CASES["the whole history and its failures"][0])
    assert _reads_ahead(few, 60_000) == [
        '"WITH b AS MATERIALIZED (SELECT $1::integer AS bound) (SELECT seq, turn, role, c'
    ]
    turns, budget = CASES["a window longer than its first range read"]
    long = _memory(cast, turns)
    assert _reads_ahead(long, budget) == [
        '"WITH b AS MATERIALIZED (SELECT LEAST((SELECT min(turn) FROM (SELECT turn FROM m'
    ]


def _plan(sql: str, params: list) -> dict:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    return (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]


def _nodes(plan: dict):
    yield plan
    for child in plan.get("Plans", []):
        yield from _nodes(child)


@on_postgresql
@pytest.mark.parametrize("bounded", [False, True])
def test_the_reads_ahead_merge_their_three_parts_and_read_the_window_range_once_or_twice(cast, bounded):
    memory = _memory(cast, CASES["a window longer than its first range read"][0])
    window = [memory.id, "default", window_first_chunk(None)]
    params = [
        *(window + [memory.last_turn + 1] if bounded else [0]),
        *window,
        memory.id,
        200,
        memory.id,
        "default",
        FAILURES_LIMIT,
    ]
    plan = _plan(postgresql_reads_ahead_sql(before=False, bounded=bounded), params)
    # The three parts, each in order, merged: never the whole window sorted again.
    assert plan["Node Type"] == "Merge Append", plan
    entry_reads = [n for n in _nodes(plan) if n.get("Relation Name") == "memories_entry"]
    # The window's range, the failures, and with a bound the range's turns once more (not twice).
    assert len(entry_reads) == (3 if bounded else 2), plan


@on_sqlite
@pytest.mark.parametrize("before", [False, True])
def test_sqlites_reads_ahead_merge_the_window_in_its_index_order_without_sorting_it(cast, before):
    memory = _memory(cast, CASES["the whole history and its failures"][0])
    params = [
        memory.id,
        200,
        memory.id,
        "default",
        0,
        FAILURES_LIMIT,
        memory.id,
        "default",
        *([memory.last_seq + 1] if before else []),
    ]
    sql = sqlite_reads_ahead_sql(before=before).replace("%s", "?")
    with connection.cursor() as cursor:
        plan = [row[3] for row in cursor.execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()]
        rows = cursor.execute(sql, params).fetchall()
    assert plan[0] == "MERGE (UNION ALL)", plan
    window = plan[plan.index("RIGHT") + 1 :]
    assert len(window) == 1 and window[0].startswith("SEARCH memories_entry USING INDEX entry_window_idx"), (
        plan
    )
    # The facts-and-failures row first, then every message newest first.
    assert json.loads(rows[0][3])[0][1] == "The user lives in Lisbon." and len(json.loads(rows[0][5])) == 10
    assert [r[0] for r in rows[1:]] == sorted((r[0] for r in rows[1:]), reverse=True)
    assert len(rows) - 1 == memory.message_count


@on_sqlite
def test_decorate_on_sqlite_is_its_store_and_one_read_statement(cast):
    memory = _memory(cast, CASES["the whole history and its failures"][0])
    stub = type(memory)(id=memory.id, project=cast.project_a)
    with CaptureQueriesContext(connection) as ctx:
        answer = memory_decorate(
            memory=stub, messages=[{"role": "user", "content": "Hello again"}], scoped=True
        )
    sql = [q["sql"] for q in ctx.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]
    assert len(sql) == 4, sql  # the memory row's UPDATE, the turn, the entry; the reads
    assert sql[-1].startswith(f"SELECT {2**63 - 1}, NULL"), sql
    assert answer["context"]["facts"] and "failure" in answer["context_text"]
