"""decorate and report write at most 2 rows beyond the rows they store.

What they store: the turn and entry rows and the report's outbox row. Everything else a request
writes (the memory row's counters, any bookkeeping) counts against the budget, and none of it
may be a row the whole project shares (rate counter, volume, plan usage).
"""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.models import Memory
from projects.models import ApiCall, Project, ProjectUsage, RateCounter
from tests.fixtures.api import decorate, report

BUDGET = 2
# Every row write a statement makes, a plain one or the data-modifying CTEs of one `WITH …`
# statement (PostgreSQL's one-statement decorate and report): (verb, table) each.
WRITES = re.compile(
    r'(?<!DO )\b(INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM|REPLACE\s+INTO)\s+"?(\w+)"?',
    re.IGNORECASE,
)
STORED_TABLES = ("memories_entry", "memories_turn", "memories_outbox")
SHARED = ("memories_apicall", "memories_projectusage", "memories_ratecounter")


def writes(queries) -> list[tuple[str, str]]:
    return [
        (verb.split()[0].upper(), table.lower()) for q in queries for verb, table in WRITES.findall(q["sql"])
    ]


def stored(queries) -> list[tuple[str, str]]:
    return [w for w in writes(queries) if w[0] == "INSERT" and w[1] in STORED_TABLES]


def bookkeeping(queries) -> list[tuple[str, str]]:
    return [w for w in writes(queries) if not (w[0] == "INSERT" and w[1] in STORED_TABLES)]


def test_the_write_count_sees_into_a_with_statement():
    sql = (
        "WITH m AS (UPDATE memories_memory SET last_seq = last_seq + 1 WHERE id = 1 RETURNING id), "
        "e AS (INSERT INTO memories_entry (memory_id) SELECT id FROM m) "
        'INSERT INTO "memories_outbox" (memory_id) SELECT id FROM m ON CONFLICT DO UPDATE SET kind = 1'
    )
    assert writes([{"sql": sql}]) == [
        ("UPDATE", "memories_memory"),
        ("INSERT", "memories_entry"),
        ("INSERT", "memories_outbox"),
    ]
    assert bookkeeping([{"sql": sql}]) == [("UPDATE", "memories_memory")]


@pytest.fixture
def warm(cast):
    """A memory with history, on a project with a rate limit and a plan allowance, and a key
    whose last_used_at is fresh (it is written at most once a minute)."""
    cast.project_a.rate_limit_per_minute = 10_000
    cast.project_a.allowance_requests_per_month = 10_000
    cast.project_a.save()
    memory_id = cast.a.post("/v1/memories", {}, format="json").json()["id"]
    for i in range(3):
        assert decorate(cast.a, memory_id, [{"role": "user", "content": f"hi {i}"}]).status_code == 200
        assert report(cast.a, memory_id, [{"role": "assistant", "content": f"yo {i}"}]).status_code == 202
    return memory_id


def _decorate(cast, memory_id, **extra):
    return decorate(cast.a, memory_id, [{"role": "user", "content": "hello there"}], **extra)


def test_decorate_writes_at_most_two_rows_beyond_what_it_stores(cast, warm):
    with CaptureQueriesContext(connection) as ctx:
        assert _decorate(cast, warm, instructions="Be brief.").status_code == 200
    extra = bookkeeping(ctx.captured_queries)
    assert len(extra) <= BUDGET, extra
    assert ("INSERT", "memories_entry") in stored(ctx.captured_queries), "the new message was stored"


def test_decorate_in_a_named_thread_writes_at_most_two_rows_beyond_what_it_stores(cast, warm):
    assert _decorate(cast, warm, thread="t1").status_code == 200  # the thread's row is made
    with CaptureQueriesContext(connection) as ctx:
        assert _decorate(cast, warm, thread="t1").status_code == 200
    extra = bookkeeping(ctx.captured_queries)
    assert len(extra) <= BUDGET, extra  # the memory's counters and the thread's
    assert ("INSERT", "memories_entry") in stored(ctx.captured_queries), "the new message was stored"


def test_report_writes_at_most_two_rows_beyond_what_it_stores(cast, warm):
    with CaptureQueriesContext(connection) as ctx:
        answer = cast.a.post(
            f"/v1/memories/{warm}/report",
            {"messages": [{"role": "assistant", "content": "Hello!"}]},
            format="json",
        )
    assert answer.status_code == 202
    extra = bookkeeping(ctx.captured_queries)
    assert len(extra) <= BUDGET, extra


def test_a_report_with_a_failure_stays_within_the_budget_beyond_its_digest_rows(cast, warm):
    with CaptureQueriesContext(connection) as ctx:
        answer = cast.a.post(
            f"/v1/memories/{warm}/report",
            {
                "messages": [{"role": "assistant", "content": "Sorry."}],
                "failures": [{"task_id": "lookup", "error": "timeout after 30s"}],
            },
            format="json",
        )
    assert answer.status_code == 202
    extra = [w for w in bookkeeping(ctx.captured_queries) if w[1] != "memories_errordigest"]
    assert len(extra) <= BUDGET + 1, extra  # + the digest counter on the memory row


def test_no_request_writes_a_row_the_whole_project_shares(cast, warm):
    with CaptureQueriesContext(connection) as ctx:
        assert _decorate(cast, warm).status_code == 200
        assert report(cast.a, warm, [{"role": "assistant", "content": "Hi"}]).status_code == 202
        assert cast.a.get(f"/v1/memories/{warm}").status_code == 200
    shared = [w for w in writes(ctx.captured_queries) if w[1] in SHARED]
    assert shared == []
    assert not RateCounter.objects.exists()


def test_a_dry_run_decorate_writes_nothing(cast, warm):
    with CaptureQueriesContext(connection) as ctx:
        assert _decorate(cast, warm, store=False).status_code == 200
    assert writes(ctx.captured_queries) == []


def test_the_counts_reach_the_console_rows_with_the_flush(cast, warm):
    from projects.usage import usage_flush

    usage_flush()
    period_rows = ProjectUsage.objects.filter(project=cast.project_a)
    # 1 create + 6 warm-up requests so far, all counted against the plan.
    assert period_rows.get().requests == 7
    assert ApiCall.objects.get(project=cast.project_a, operation="decorate").count == 3
    assert _decorate(cast, warm).status_code == 200
    assert ApiCall.objects.get(project=cast.project_a, operation="decorate").count == 3  # not yet flushed
    assert usage_flush() >= 2
    assert ApiCall.objects.get(project=cast.project_a, operation="decorate").count == 4
    assert ApiCall.objects.get(project=cast.project_a, operation="report").count == 3
    assert period_rows.get().requests == 8
    assert usage_flush() == 0  # nothing new: a flush with nothing dirty writes nothing


def test_decorate_reads_no_project_row_and_the_memory_row_twice_at_most(cast, warm):
    # The key's project (cached with the key) scopes the memory; the locked re-read of the memory
    # keeps it, so the embeddings switch in context_build costs no query.
    with CaptureQueriesContext(connection) as ctx:
        assert _decorate(cast, warm).status_code == 200
    reads = [q["sql"] for q in ctx.captured_queries if q["sql"].lstrip().upper().startswith("SELECT")]

    def reading(table):
        return [sql for sql in reads if re.search(rf'\bFROM\s+"?{table}"?\s', sql)]

    assert reading(Project._meta.db_table) == [], reads
    assert len(reading(Memory._meta.db_table)) <= 2, reads


def _statements(run) -> list[str]:
    """What `run` sends, but the savepoints of the test's own transaction (in production the
    outermost atomic block is BEGIN / COMMIT, which the capture does not show either)."""
    with CaptureQueriesContext(connection) as ctx:
        run()
    return [
        q["sql"] for q in ctx.captured_queries if not re.match(r"\s*(?:RELEASE\s+)?SAVEPOINT\b", q["sql"])
    ]


def test_report_is_one_statement_on_postgresql_and_three_on_sqlite(cast, warm):
    from memories.selectors import memory_get
    from memories.services import report_accept

    memory = memory_get(project=cast.project_a, memory_id=warm)
    before = Memory.objects.get(pk=warm)
    sql = _statements(
        lambda: report_accept(memory=memory, messages=[{"role": "assistant", "content": "Hi!"}], failures=[])
    )
    assert len(sql) == (1 if connection.vendor == "postgresql" else 3), sql
    after = Memory.objects.get(pk=warm)
    assert (after.last_seq, after.message_count, after.last_turn) == (
        before.last_seq + 1,
        before.message_count + 1,
        before.last_turn,
    )
    entry = after.entries.get(seq=after.last_seq)
    assert (entry.role, entry.content, entry.turn) == ("assistant", "Hi!", before.last_turn)
    outbox = after.outbox.order_by("-id").first()
    turn_start = after.entries.filter(turn=before.last_turn).order_by("seq").first().seq
    assert outbox.payload == {"from_seq": turn_start, "to_seq": after.last_seq}


def test_decorate_stores_in_one_statement_on_postgresql_and_three_on_sqlite(cast, warm):
    from memories.selectors import memory_get
    from memories.services import memory_decorate

    memory = memory_get(project=cast.project_a, memory_id=warm)
    before = Memory.objects.get(pk=warm)
    messages = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "between"},
        {"role": "user", "content": "second"},
    ]
    answer = {}
    sql = _statements(
        lambda: answer.update(
            memory_decorate(memory=memory, messages=messages, budget_tokens=5000, instructions="Be brief.")
        )
    )
    stores = [s for s in sql if WRITES.search(s)]
    assert len(stores) == (1 if connection.vendor == "postgresql" else 3), stores
    # + the reads: facts, window, failures, one statement (memories.selectors.ContextReads; on SQLite
    # when the first range holds every message, as here)
    assert len(sql) == len(stores) + 1, sql
    after = Memory.objects.get(pk=warm)
    assert answer["turn"] == after.last_turn == before.last_turn + 2
    assert (after.last_seq, after.message_count, after.last_budget_tokens, after.instructions) == (
        before.last_seq + 3,
        before.message_count + 3,
        5000,
        "Be brief.",
    )
    rows = list(
        after.entries.filter(seq__gt=before.last_seq).order_by("seq").values_list("seq", "turn", "role")
    )
    assert rows == [
        (before.last_seq + 1, before.last_turn + 1, "user"),
        (before.last_seq + 2, before.last_turn + 1, "assistant"),
        (before.last_seq + 3, before.last_turn + 2, "user"),
    ]
    turns = list(
        after.turns.filter(number__gt=before.last_turn)
        .order_by("number")
        .values_list("number", "input", "state")
    )
    assert turns == [(before.last_turn + 1, "first", "READY"), (before.last_turn + 2, "second", "READY")]
    # The history sent back stops before the stored new messages (they are sent once, as new).
    assert [m["content"] for m in answer["messages"][-3:]] == ["first", "between", "second"]
    assert [m["content"] for m in answer["messages"]].count("first") == 1
