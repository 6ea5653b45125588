"""Memory.turn_start_seq (migration 0008): the first seq of the memory's newest turn, kept by every
write that opens a turn, so report's write takes the turn's start from the memory row instead of
reading the turn's entries."""

from __future__ import annotations

import importlib
import random

import pytest
from django.db import connection
from django.db.models import Min
from django.test.utils import CaptureQueriesContext

from memories import services
from memories.models import Entry, Memory, Outbox
from memories.services.report import validate_failures

pytestmark = pytest.mark.django_db

FILL = importlib.import_module("memories.migrations.0008_turn_start_and_fewer_indexes").FILL_TURN_START


def _newest_turn_start(memory_id: str) -> int:
    memory = Memory.objects.get(pk=memory_id)
    found = Entry.objects.filter(memory_id=memory_id, turn=memory.last_turn).aggregate(m=Min("seq"))["m"]
    return found or 0


def _user(text: str) -> dict:
    return {"role": "user", "content": text}


def _assistant(text: str) -> dict:
    return {"role": "assistant", "content": text}


def test_every_write_that_opens_a_turn_keeps_the_turns_start(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    rng = random.Random(17)
    steps = [
        lambda i: services.memory_decorate(memory=memory, messages=[_user(f"q{i}")]),
        # several user messages in one decorate: the newest turn starts at the last of them
        lambda i: services.memory_decorate(
            memory=memory, messages=[_user(f"a{i}"), _assistant(f"b{i}"), _user(f"c{i}")]
        ),
        # a decorate that opens no turn (an assistant message first: entries_append's way)
        lambda i: services.memory_decorate(memory=memory, messages=[_assistant(f"x{i}")]),
        # ... and one that does, the same way (a user message after it)
        lambda i: services.memory_decorate(memory=memory, messages=[_assistant(f"y{i}"), _user(f"z{i}")]),
        lambda i: services.report_accept(memory=memory, messages=[_assistant(f"r{i}")], failures=[]),
        lambda i: services.report_accept(
            memory=memory,
            messages=[_assistant(f"f{i}")],
            failures=validate_failures([{"task_id": "t", "error": "boom"}]),
        ),
    ]
    for i in range(60):
        rng.choice(steps)(i)
        after = Memory.objects.get(pk=memory.pk)
        assert after.turn_start_seq == _newest_turn_start(memory.pk), i


def test_a_failures_only_report_on_a_new_memory_starts_its_turn(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    services.report_accept(
        memory=memory, messages=[], failures=validate_failures([{"task_id": "t", "error": "boom"}])
    )
    after = Memory.objects.get(pk=memory.pk)
    assert after.last_turn == 1 and after.turn_start_seq == _newest_turn_start(memory.pk) == 1
    services.report_accept(memory=after, messages=[_assistant("late")], failures=[])
    assert Outbox.objects.filter(memory=memory).order_by("-id").first().payload["from_seq"] == 1


def test_reports_outbox_row_covers_the_turn_from_its_user_message(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    services.memory_decorate(memory=memory, messages=[_user("one")])
    services.report_accept(memory=memory, messages=[_assistant("two")], failures=[])
    services.memory_decorate(memory=memory, messages=[_user("three"), _assistant("four"), _user("five")])
    services.report_accept(memory=memory, messages=[_assistant("six")], failures=[])
    services.report_accept(memory=memory, messages=[_assistant("seven")], failures=[])
    payloads = [o.payload for o in Outbox.objects.filter(memory=memory).order_by("id")]
    assert payloads == [
        {"from_seq": 1, "to_seq": 2},
        {"from_seq": 5, "to_seq": 6},
        {"from_seq": 5, "to_seq": 7},
    ]


def test_reports_write_reads_no_entry(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    services.memory_decorate(memory=memory, messages=[_user("one")])
    with CaptureQueriesContext(connection) as ctx:
        services.report_accept(memory=memory, messages=[_assistant("two")], failures=[])
    update = next(q["sql"] for q in ctx.captured_queries if "UPDATE" in q["sql"])
    assert "SELECT" not in update.split("RETURNING", 1)[1].split(")", 1)[0], update
    assert "MIN(" not in update.upper(), update


def test_a_memory_whose_counters_were_set_by_hand_reports_from_its_own_rows(cast):
    """turn_start_seq 0 (not known): the outbox row starts at the report's first row; nothing fails."""
    memory, _ = services.memory_create(project=cast.project_a)
    services.memory_decorate(memory=memory, messages=[_user("one")])
    Memory.objects.filter(pk=memory.pk).update(turn_start_seq=0)
    answer = services.report_accept(memory=memory, messages=[_assistant("two")], failures=[])
    assert answer["accepted"] == 1
    assert Outbox.objects.get(memory=memory).payload == {"from_seq": 2, "to_seq": 2}


def test_the_migration_fills_the_turn_start_from_the_entries(cast):
    memories = []
    for n in range(3):
        memory, _ = services.memory_create(project=cast.project_a)
        for i in range(n + 1):
            services.memory_decorate(memory=memory, messages=[_user(f"q{i}"), _assistant(f"a{i}")])
            services.report_accept(memory=memory, messages=[_assistant(f"r{i}")], failures=[])
        memories.append(memory.pk)
    empty, _ = services.memory_create(project=cast.project_a)
    expected = {pk: _newest_turn_start(pk) for pk in memories}
    assert all(expected.values())
    Memory.objects.update(turn_start_seq=0)
    with connection.cursor() as cursor:
        cursor.execute(FILL)
    assert {pk: Memory.objects.get(pk=pk).turn_start_seq for pk in memories} == expected
    assert Memory.objects.get(pk=empty.pk).turn_start_seq == 0
