"""The entry indexes (migration 0007): a message enters none but the window's of the partial
ones, and the reads that used the old (memory, kind, turn) index still go through an index."""

from __future__ import annotations

import pytest
from django.db import connection

from memories.models import Entry
from memories.selectors import _FAILURES_SQL

pytestmark = pytest.mark.django_db


@pytest.fixture
def history(cast) -> str:
    """A memory of 3,000 entries, nearly all messages, a digest and an error every 300 and a
    stored data entry every 500 (PostgreSQL plans from statistics: they are taken; SQLite's
    production databases have none, so none are taken there)."""
    from django.utils import timezone

    from memories import services

    memory, _ = services.memory_create(project=cast.project_a)
    now = timezone.now()
    rows = []
    for seq in range(1, 3001):
        kind = "digest" if seq % 300 == 0 else "error" if seq % 300 == 1 else "data" if seq % 500 == 7 else "message"
        rows.append((memory.id, seq, seq // 2 + 1, kind, "user" if kind == "message" else "", "x" * 100,
                     "k" if kind == "data" else "", True, 25, now))
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {Entry._meta.db_table} (memory_id, seq, turn, kind, role, content, name, tool_call_id, "
            "task_id, key, committed, tokens, created_at) VALUES (%s, %s, %s, %s, %s, %s, '', '', '', %s, %s, %s, %s)",
            rows)
        if connection.vendor == "postgresql":
            cursor.execute(f"ANALYZE {Entry._meta.db_table}")
    return memory.id


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
    assert {"entry_failure_idx", "entry_data_idx", "entry_window_idx", "entry_turn_idx", "entry_memory_seq"} <= set(found)
    assert found["entry_failure_idx"]["columns"] == ["memory_id", "turn"]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [Entry._meta.db_table])
        else:
            cursor.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = %s",
                           [Entry._meta.db_table])
        definitions = dict(cursor.fetchall())
    for name in ("entry_failure_idx", "entry_data_idx"):
        assert "WHERE" in definitions[name] and "message" not in definitions[name], definitions[name]


def test_the_failures_block_reads_its_partial_index(history):
    plan = _plan(_FAILURES_SQL, [history, 1200, 50])
    assert "entry_failure_idx" in plan, plan


def test_the_pipelines_stored_data_reads_its_partial_index(history):
    qs = (Entry.objects.filter(memory_id=history, kind="data", committed=True, seq__lt=2900).exclude(key="")
          .order_by("-seq").values_list("key", "value")[:200])
    sql, params = qs.query.sql_with_params()
    plan = _plan(sql, list(params))
    assert "entry_data_idx" in plan, plan


def test_the_console_timeline_reads_a_turn_range_through_an_index(history):
    qs = (Entry.objects.filter(memory_id=history, turn__gte=1400, turn__lte=1420).select_related("errordigest")
          .order_by("turn", "seq")[:501])
    sql, params = qs.query.sql_with_params()
    plan = _plan(sql, list(params))
    assert "entry_turn_idx" in plan, plan
