"""The entry indexes (migration 0007): a message enters none but the window's of the partial
ones, the reads that used the old (memory, kind, turn) index still go through an index, and the
window is an index range read in seq order whatever the mix of rows."""

from __future__ import annotations

import pytest
from django.db import connection

from memories.models import Entry
from memories.selectors.sql import FAILURES_SQL, postgresql_reads_ahead_sql, window_sql

pytestmark = pytest.mark.django_db


def _store(cast, kind_of, committed_of=lambda seq: True, memories: int = 1) -> str:
    """`memories` memories of 3,000 entries each, of the kinds `kind_of(seq)` says (PostgreSQL plans
    from statistics: they are taken; SQLite's production databases have none, so none are taken
    there); the last one's id."""
    from django.utils import timezone

    from memories import services

    now = timezone.now()
    rows = []
    for _ in range(memories):
        memory, _ = services.memory_create(project=cast.project_a)
        for seq in range(1, 3001):
            kind = kind_of(seq)
            rows.append(
                (
                    memory.id,
                    seq,
                    seq // 2 + 1,
                    kind,
                    "user" if kind == "message" else "",
                    "x" * 100,
                    "k" if kind == "data" else "",
                    committed_of(seq),
                    25,
                    now,
                )
            )
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {Entry._meta.db_table} (memory_id, seq, turn, kind, role, content, name, "
            "tool_call_id, task_id, key, committed, tokens, created_at) VALUES (%s, %s, %s, %s, %s, %s, '', "
            "'', '', %s, %s, %s, %s)",
            rows,
        )
        if connection.vendor == "postgresql":
            cursor.execute(f"ANALYZE {Entry._meta.db_table}")
    return memory.id


@pytest.fixture
def history(cast) -> str:
    """A memory of 3,000 entries, nearly all messages, a digest and an error every 300 and a
    stored data entry every 500."""
    return _store(
        cast,
        lambda seq: (
            "digest"
            if seq % 300 == 0
            else "error"
            if seq % 300 == 1
            else "data"
            if seq % 500 == 7
            else "message"
        ),
    )


# A pipeline's memories: per message a stored data entry, a raw error left uncommitted and a digest
# or an action, and an action every seventh entry; and memories whose newest 1,000 entries are
# uncommitted messages (a rolled-back stretch). Twenty of each, so the statistics see such a table.
MIXES = {
    "pipeline": (
        lambda seq: (
            ("message", "data", "error", "digest" if seq % 3 == 0 else "action")[seq % 4]
            if seq % 7
            else "action"
        ),
        lambda seq: seq % 4 != 2,
    ),
    "uncommitted_tail": (lambda seq: "message", lambda seq: seq <= 2000),
}


@pytest.fixture(params=sorted(MIXES))
def mixed(cast, request) -> str:
    kind_of, committed_of = MIXES[request.param]
    return _store(cast, kind_of, committed_of, memories=20)


def _indexes() -> dict:
    with connection.cursor() as cursor:
        return connection.introspection.get_constraints(cursor, Entry._meta.db_table)


def _plan(sql: str, params: list) -> str:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("EXPLAIN " + sql, params)
        else:
            cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
        return "\n".join(str(row[-1]) for row in cursor.fetchall())


def test_the_kind_and_turn_index_is_two_partial_ones_no_message_enters():
    found = _indexes()
    assert "entry_kind_turn_idx" not in found
    assert {
        "entry_failure_idx",
        "entry_data_idx",
        "entry_window_idx",
        "entry_turn_idx",
        "entry_memory_seq",
    } <= set(found)
    assert found["entry_failure_idx"]["columns"] == ["memory_id", "thread", "turn"]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [Entry._meta.db_table]
            )
        else:
            cursor.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = %s",
                [Entry._meta.db_table],
            )
        definitions = dict(cursor.fetchall())
    for name in ("entry_failure_idx", "entry_data_idx"):
        assert "WHERE" in definitions[name] and "message" not in definitions[name], definitions[name]


def test_the_failures_block_reads_its_partial_index(history):
    plan = _plan(FAILURES_SQL, [history, "default", 1200, 50])
    assert "entry_failure_idx" in plan, plan


def test_the_pipelines_stored_data_reads_its_partial_index(history):
    qs = (
        Entry.objects.filter(memory_id=history, kind="data", committed=True, seq__lt=2900)
        .exclude(key="")
        .order_by("-seq")
        .values_list("key", "value")[:200]
    )
    sql, params = qs.query.sql_with_params()
    plan = _plan(sql, list(params))
    assert "entry_data_idx" in plan, plan


def test_the_console_timeline_reads_a_turn_range_through_an_index(history):
    qs = (
        Entry.objects.filter(memory_id=history, thread="default", turn__gte=1400, turn__lte=1420)
        .select_related("errordigest")
        .order_by("turn", "seq")[:501]
    )
    sql, params = qs.query.sql_with_params()
    plan = _plan(sql, list(params))
    assert "entry_turn_idx" in plan, plan


def _window_plans(memory_id: str) -> list[str]:
    """The window's reads as decorate sends them: the first range (PostgreSQL: with a LIMIT, and the
    reads ahead's one statement, which reads that range for the window and, bounded, for its turns),
    the later ranges."""
    vendor = connection.vendor
    plans = [
        _plan(
            window_sql(vendor, before=True, limit=vendor != "sqlite"),
            [memory_id, "default", 2900, *([64] if vendor != "sqlite" else [])],
        ),
        _plan(
            window_sql(vendor, before=False, limit=vendor != "sqlite"),
            [memory_id, "default", *([256] if vendor != "sqlite" else [])],
        ),
    ]
    if vendor == "postgresql":
        plans.append(
            _plan(
                postgresql_reads_ahead_sql(before=True, bounded=True),
                [
                    *(memory_id, "default", 2900, 64, 1400),
                    *(memory_id, "default", 2900, 64),
                    *(memory_id, 200, memory_id, "default", 50),
                ],
            )
        )
    return plans


def _reads_in_index_order(plan: str) -> bool:
    """The window's rows come from an index range read in seq order, newest first: its partial
    index, or (where nearly every row is a committed message, PostgreSQL's choice) the unique
    (memory, seq) one backwards; never a sort of what a scan found."""
    if connection.vendor == "postgresql":
        # (The reads ahead merge their parts, each in order: Merge Append's "Sort Key" is no sort.)
        window = "\n".join(line for line in plan.split("\n") if "Sort Key:" not in line)
        head = window.split("entry_window_idx" if "entry_window_idx" in window else "entry_memory_seq")[0]
        return (
            (
                "Index Scan using entry_window_idx" in window
                or "Index Scan Backward using entry_memory_seq" in window
            )
            and "Sort" not in head
            and "Bitmap" not in head
        )
    return "USING INDEX entry_window_idx" in plan and "TEMP B-TREE" not in plan


def test_the_window_is_an_index_range_read(history):
    for plan in _window_plans(history):
        assert _reads_in_index_order(plan), plan


def test_the_window_is_an_index_range_read_at_other_mixes_of_rows(mixed):
    """Messages a fifth of the rows, or the newest thousand uncommitted: still an index range read in
    seq order (no sort). Without the window's own index (the unique (memory, seq) index read backwards with a
    filter), PostgreSQL planned the pipeline mix's later ranges as a bitmap scan of the memory's
    whole entries and a sort (docs/tuning/serving.md)."""
    for plan in _window_plans(mixed):
        assert _reads_in_index_order(plan), plan
