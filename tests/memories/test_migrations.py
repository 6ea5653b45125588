"""Migration `0011_threads`: a memory written before threads existed reads as one `default`
thread afterwards, its counts, turns and window unchanged; `0014_recall_thread`: its recall index
rows answer a search of their thread (run on SQLite and on PostgreSQL)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from memories.models import Entry, Memory, Turn
from memories.selectors import memory_window, thread_list, thread_view

BEFORE = [("memories", "0010_recall_vector_codes")]


@pytest.mark.django_db(transaction=True)
def test_an_existing_memory_reads_as_one_default_thread_after_the_migration():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    old = executor.loader.project_state(BEFORE).apps
    project = old.get_model("projects", "Project").objects.create(name="before threads")
    memory = old.get_model("memories", "Memory").objects.create(
        id="mem_beforethreads",
        project_id=project.pk,
        last_seq=3,
        last_turn=2,
        message_count=3,
        token_count=30,
    )
    entries = old.get_model("memories", "Entry")
    for seq, turn, role in ((1, 1, "user"), (2, 1, "assistant"), (3, 2, "user")):
        entries.objects.create(memory_id=memory.pk, seq=seq, turn=turn, kind="message", role=role, tokens=10)
    for number in (1, 2):
        old.get_model("memories", "Turn").objects.create(memory_id=memory.pk, number=number)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())  # 0011_threads and every migration after it

    migrated = Memory.objects.get(pk=memory.pk)
    assert set(Entry.objects.filter(memory=migrated).values_list("thread", flat=True)) == {"default"}
    assert set(Turn.objects.filter(memory=migrated).values_list("thread", flat=True)) == {"default"}
    view = thread_view(memory=migrated)
    assert (view.name, view.last_turn, view.message_count, view.token_count) == ("default", 2, 3, 30)
    listed, more = thread_list(memory=migrated, limit=10)
    assert [t.name for t in listed] == ["default"] and not more
    window = memory_window(memory_id=migrated.pk, before_seq=None, budget=1000, reserved=0, new_has_user=True)
    assert [m["role"] for m in window.messages] == ["user", "assistant", "user"]


@pytest.mark.django_db(transaction=True)
def test_index_rows_written_before_0014_answer_a_search_of_their_thread():
    from memories import recall

    before = [("memories", "0013_outbox_parked")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    project = old.get_model("projects", "Project").objects.create(name="before recall threads")
    memory = old.get_model("memories", "Memory").objects.create(
        id="mem_beforerecallthreads", project_id=project.pk, last_seq=2, message_count=2
    )
    entries = old.get_model("memories", "Entry")
    said = {}
    for seq, thread in ((1, "default"), (2, "trip")):
        entry = entries.objects.create(
            memory_id=memory.pk,
            seq=seq,
            turn=1,
            kind="message",
            role="user",
            thread=thread,
            content=f"The ferry to Hvar leaves at eight ({thread})",
        )
        said[thread] = entry.pk
        with connection.cursor() as cursor:  # the index row as it was written before 0014
            if connection.vendor == "postgresql":
                cursor.execute(
                    "INSERT INTO memories_recall (entry_id, memory_id, seq, turn, role, created_at, body) "
                    "VALUES (%s, %s, %s, 1, 'user', now(), %s)",
                    [entry.pk, memory.pk, seq, entry.content],
                )
            else:
                cursor.execute(
                    "INSERT INTO memories_recall (rowid, body, mkey, memory_id, seq, turn, role, created_at) "
                    "VALUES (%s, %s, 'kmembeforerecallthreads', %s, %s, 1, 'user', %s)",
                    [entry.pk, entry.content, memory.pk, seq, "2026-01-01T00:00:00+00:00"],
                )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    def found(thread=None):
        hits = recall.search(memory_id=memory.pk, query="ferry Hvar", thread=thread)
        assert all(h["thread"] == ("default" if h["entry_id"] == said["default"] else "trip") for h in hits)
        return sorted(h["entry_id"] for h in hits)

    assert found() == sorted(said.values())
    assert found("trip") == [said["trip"]]
    assert found("default") == [said["default"]]
