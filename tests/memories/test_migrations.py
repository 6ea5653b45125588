"""Migration `0011_threads`: a memory written before threads existed reads as one `default`
thread afterwards, its counts, turns and window unchanged (run on SQLite and on PostgreSQL)."""

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
