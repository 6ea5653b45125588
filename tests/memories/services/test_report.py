"""report's common case and decorate's store outside any transaction (as the hot routes run
them): a write transaction of their own, committed, or rolled back whole when a statement fails."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection
from django.test.utils import CaptureQueriesContext

from common.errors import NotFound
from common.messages import entry_fields
from memories import services
from memories.models import Entry, Memory, Outbox, Thread, Turn
from memories.services.turn_join import messages_join_turn_enqueue
from memories.services.turn_store import entries_store_turn
from projects.services import project_create

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def memory():
    project = project_create(name="Solo")
    memory, _ = services.memory_create(project=project)
    services.memory_decorate(memory=memory, messages=[{"role": "user", "content": "hi"}])
    return Memory.objects.get(pk=memory.pk)


def test_a_report_in_autocommit_commits_its_rows_counters_and_outbox_row(memory):
    assert connection.get_autocommit() and not connection.in_atomic_block
    answer = services.report_accept(
        memory=memory, messages=[{"role": "assistant", "content": "hello"}], failures=[]
    )
    assert answer == {"accepted": 1, "turn": 1, "task_errors": []}
    assert not _open_transaction()  # committed, nothing left open
    after = Memory.objects.get(pk=memory.pk)
    assert (after.last_seq, after.message_count, after.last_turn) == (2, 2, 1)
    assert list(Entry.objects.filter(memory=memory).order_by("seq").values_list("role", "turn")) == [
        ("user", 1),
        ("assistant", 1),
    ]
    assert Outbox.objects.get(memory=memory).payload == {"from_seq": 1, "to_seq": 2}


def test_a_statement_failing_inside_the_report_rolls_back_the_counters_too(memory):
    bad = entry_fields({"role": "assistant", "content": "hello"})
    bad["tokens"] = -1  # the entry INSERT breaks its CHECK after the memory row's UPDATE ran
    with pytest.raises(IntegrityError):
        messages_join_turn_enqueue(memory_id=memory.id, items=[bad])
    assert not _open_transaction()
    after = Memory.objects.get(pk=memory.pk)
    assert (after.last_seq, after.message_count, after.token_count) == (
        memory.last_seq,
        memory.message_count,
        memory.token_count,
    )
    assert Entry.objects.filter(memory=memory).count() == 1
    assert not Outbox.objects.filter(memory=memory).exists()
    # The connection is usable afterwards, and the next report lands where the failed one would have.
    services.report_accept(memory=memory, messages=[{"role": "assistant", "content": "again"}], failures=[])
    assert Memory.objects.get(pk=memory.pk).last_seq == 2


def test_the_report_is_one_transaction_that_takes_the_write_lock_first(memory):
    """SQLite: BEGIN IMMEDIATE, as Django's own transactions here (settings: transaction_mode),
    so a concurrent writer waits for the lock instead of failing on the upgrade. PostgreSQL: one
    statement in autocommit (atomic in itself)."""
    with CaptureQueriesContext(connection) as ctx:
        services.report_accept(
            memory=memory, messages=[{"role": "assistant", "content": "hello"}], failures=[]
        )
    sql = [q["sql"] for q in ctx.captured_queries]
    if connection.vendor == "postgresql":
        assert len(sql) == 1 and sql[0].startswith("WITH"), sql
    else:
        assert sql[0] == "BEGIN IMMEDIATE", sql
        assert len(sql) == 4, (
            sql
        )  # BEGIN, the memory row's UPDATE, the entry, the outbox row (the commit is the driver's)
    assert not _open_transaction()


def test_a_report_in_a_named_thread_is_the_same_one_write_without_a_lock_read(memory):
    services.memory_decorate(memory=memory, messages=[{"role": "user", "content": "in t1"}], thread="t1")
    with CaptureQueriesContext(connection) as ctx:
        answer = services.report_accept(
            memory=memory, messages=[{"role": "assistant", "content": "t1's reply"}], failures=[], thread="t1"
        )
    sql = [q["sql"] for q in ctx.captured_queries]
    if connection.vendor == "postgresql":
        assert len(sql) == 1 and sql[0].startswith("WITH"), sql
    else:  # BEGIN, the memory row's UPDATE, the thread's, the entry, the outbox row
        assert sql[0] == "BEGIN IMMEDIATE" and len(sql) == 5, sql
    assert answer == {"accepted": 1, "turn": 1, "task_errors": []}
    assert not _open_transaction()
    rows = list(Entry.objects.filter(memory=memory).order_by("seq").values_list("thread", "turn", "role"))
    assert rows[-2:] == [("t1", 1, "user"), ("t1", 1, "assistant")]
    after, thread = Memory.objects.get(pk=memory.pk), Thread.objects.get(memory=memory, name="t1")
    assert (after.last_seq, after.message_count, after.threads_message_count) == (3, 3, 2)
    assert (thread.message_count, thread.last_turn) == (2, 1)
    assert Outbox.objects.filter(memory=memory).order_by("id").last().payload == {"from_seq": 2, "to_seq": 3}
    # A thread with no turn yet takes the locked path, which makes it.
    services.report_accept(
        memory=memory, messages=[{"role": "assistant", "content": "x"}], failures=[], thread="t2"
    )
    assert Thread.objects.get(memory=memory, name="t2").message_count == 1


def test_a_report_on_a_memory_of_another_project_writes_nothing(memory):
    other = project_create(name="Other")
    stub = Memory(id=memory.id, project=other)
    with pytest.raises(NotFound):
        services.report_accept(
            memory=stub, messages=[{"role": "assistant", "content": "x"}], failures=[], scoped=True
        )
    assert Memory.objects.get(pk=memory.pk).last_seq == memory.last_seq
    assert not Outbox.objects.filter(memory=memory).exists()
    assert not _open_transaction()


def test_a_decorate_in_autocommit_stores_in_one_write_transaction_that_takes_the_lock_first(memory):
    assert connection.get_autocommit() and not connection.in_atomic_block
    with CaptureQueriesContext(connection) as ctx:
        answer = services.memory_decorate(memory=memory, messages=[{"role": "user", "content": "again"}])
    assert answer["turn"] == 2
    sql = [q["sql"] for q in ctx.captured_queries]
    if connection.vendor == "postgresql":
        assert sql[0].startswith("WITH"), sql
    else:
        # BEGIN, the memory row's UPDATE, the turn, the entry (the commit is the driver's); then the reads.
        assert sql[0] == "BEGIN IMMEDIATE" and sql[1].startswith("UPDATE"), sql
        assert not any(s.startswith("SAVEPOINT") for s in sql), sql
    assert not _open_transaction()
    after = Memory.objects.get(pk=memory.pk)
    assert (after.last_seq, after.last_turn, after.message_count) == (2, 2, 2)
    assert Turn.objects.filter(memory=memory).count() == 2


def test_a_statement_failing_inside_decorates_store_rolls_back_the_turn_and_counters_too(memory):
    bad = entry_fields({"role": "user", "content": "hello"})
    bad[
        "tokens"
    ] = -1  # the entry INSERT breaks its CHECK after the memory row's UPDATE and the turn's INSERT
    with pytest.raises(IntegrityError):
        entries_store_turn(memory=memory, items=[bad], budget_tokens=5000)
    assert not _open_transaction()
    after = Memory.objects.get(pk=memory.pk)
    assert (after.last_seq, after.last_turn, after.message_count, after.last_budget_tokens) == (
        memory.last_seq,
        memory.last_turn,
        memory.message_count,
        memory.last_budget_tokens,
    )
    assert Turn.objects.filter(memory=memory).count() == 1
    assert Entry.objects.filter(memory=memory).count() == 1
    services.memory_decorate(memory=memory, messages=[{"role": "user", "content": "again"}])
    assert Memory.objects.get(pk=memory.pk).last_turn == 2


def _open_transaction() -> bool:
    """Whether the driver's connection is left inside a transaction."""
    if connection.vendor == "sqlite":
        return connection.connection.in_transaction
    return connection.connection.info.transaction_status != 0  # psycopg: IDLE
