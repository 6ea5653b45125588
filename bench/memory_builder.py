"""The benchmarks' memory builder: a memory of any size, written straight into the entries table.

    from bench.memory_builder import copy_memory, populate, populate_indexed, word_messages
    populate(memory, conversation(100_000))   # bench.common.conversation: the synthetic history
    populate_indexed(memory, word_messages(100_000))   # as the worker leaves it: turns, recall index

Needs Django set up (bench.django_setup). The rows are the ones `entries_append` writes, minus
the Turn rows nothing on the measured paths reads; `populate_indexed` adds those and the recall
index, for the benches that measure recall.
"""

from __future__ import annotations

import random

# Words that occur in many messages, so a question made of them gives the recall index real work.
WORDS = (
    "hotel booking flight train museum budget recipe garden invoice meeting project deadline report "
    "coffee dinner weekend concert ticket doctor appointment lecture exam holiday beach mountain river "
    "library printer server database migration release sprint review "
).split()
NEEDLE = "The hotel booking reference for Lisbon is QX-4471, check-in on May 3."


def word_messages(n: int, seed: int = 7) -> list[dict]:
    """n messages, user and assistant in turn, of twelve random WORDS each; message n // 3 is NEEDLE."""
    rng = random.Random(seed)
    messages = []
    for i in range(n):
        words = " ".join(rng.choice(WORDS) for _ in range(12))
        text = NEEDLE if i == n // 3 else f"Message {i}: {words}."
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
    return messages


def populate(memory, messages: list[dict]) -> None:
    """Insert the history straight into the entries table (executemany, no model instances):
    the same rows entries_append writes, minus the Turn rows nothing on the measured paths reads."""
    import orjson
    from django.db import connection, transaction
    from django.utils import timezone

    from common.messages import entry_fields
    from memories.models import Entry, Memory
    from memories.services.statements import ENTRY_COLUMNS, JSON_COLUMNS

    q = connection.ops.quote_name
    json_cast = "::jsonb" if connection.vendor == "postgresql" else ""
    cols = ENTRY_COLUMNS
    marks = ", ".join(f"%s{json_cast}" if c in JSON_COLUMNS else "%s" for c in cols)
    sql = f"INSERT INTO {q(Entry._meta.db_table)} ({', '.join(q(c) for c in cols)}) VALUES ({marks})"
    now = timezone.now()
    rows, turn, tokens, turn_start = [], 0, 0, 0
    for seq, message in enumerate(messages, start=1):
        fields = entry_fields(message)
        if message["role"] == "user" or turn == 0:
            turn += 1
            turn_start = seq
        tokens += fields["tokens"]
        rows.append(
            (
                memory.id,
                seq,
                turn,
                "message",
                fields["role"],
                fields["content"],
                orjson.dumps(fields["parts"]).decode() if fields["parts"] is not None else None,
                fields["name"],
                orjson.dumps(fields["tool_calls"]).decode() if fields["tool_calls"] else None,
                fields["tool_call_id"],
                "",
                "",
                None,
                True,
                fields["tokens"],
                now,
            )
        )
    with transaction.atomic(), connection.cursor() as cursor:
        for start in range(0, len(rows), 5000):
            cursor.executemany(sql, rows[start : start + 5000])
    Memory.objects.filter(pk=memory.pk).update(
        last_seq=len(rows),
        last_turn=turn,
        turn_start_seq=turn_start,
        message_count=len(rows),
        token_count=tokens,
    )


def copy_memory(src):
    """A second memory with the same entries (one INSERT … SELECT), for the runs that write."""
    from django.db import connection

    from memories.models import Entry, Memory
    from memories.services import memory_create

    dst, _ = memory_create(project=src.project)
    q = connection.ops.quote_name
    cols = ", ".join(q(f.column) for f in Entry._meta.concrete_fields if f.column not in ("id", "memory_id"))
    table = q(Entry._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({q('memory_id')}, {cols}) SELECT %s, {cols} FROM {table} "
            f"WHERE {q('memory_id')} = %s",
            [dst.id, src.id],
        )
    Memory.objects.filter(pk=dst.pk).update(
        last_seq=src.last_seq,
        last_turn=src.last_turn,
        turn_start_seq=src.turn_start_seq,
        message_count=src.message_count,
        token_count=src.token_count,
    )
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {table}")
    return Memory.objects.get(pk=dst.pk)


def populate_indexed(memory, messages: list[dict]) -> None:
    """`populate`, plus a Turn row for each user message and the recall index of every entry, with
    the memory's background work marked done up to its last message."""
    from memories import recall
    from memories.models import Entry, Memory, Turn

    populate(memory, messages)
    turns, number = [], 0
    for message in messages:
        if message["role"] == "user" or number == 0:
            number += 1
            if message["role"] == "user":
                turns.append(Turn(memory=memory, number=number, input=message["content"]))
    for start in range(0, len(turns), 5000):
        Turn.objects.bulk_create(turns[start : start + 5000])
    ids = list(Entry.objects.filter(memory=memory).values_list("id", flat=True))
    for start in range(0, len(ids), 5000):
        recall.index_entries(memory_id=memory.id, entry_ids=ids[start : start + 5000])
    Memory.objects.filter(pk=memory.pk).update(background_upto_seq=len(messages))
