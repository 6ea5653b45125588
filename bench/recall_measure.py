"""Measure decorate with recall on, for a small and a very large memory (in-process).

    .venv/bin/python -m bench.recall_measure 100 100000

Builds each memory with bulk inserts plus the recall index (a fresh database under a temp var
dir), then times `memory_decorate` with a user question whose words also occur in many old
messages, so the index has real work to do. Prints the median and p90 in milliseconds.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time

from common.tokens import message_tokens

WORDS = (
    "hotel booking flight train museum budget recipe garden invoice meeting project deadline report "
    "coffee dinner weekend concert ticket doctor appointment lecture exam holiday beach mountain river "
    "library printer server database migration release sprint review "
).split()


def build(memory, n: int, seed: int = 7) -> None:
    from django.utils import timezone

    from memories import recall
    from memories.models import Entry, Memory, Turn

    rng = random.Random(seed)
    now = timezone.now()
    entries, turns = [], []
    for i in range(n):
        turn = i // 2 + 1
        role = "user" if i % 2 == 0 else "assistant"
        words = " ".join(rng.choice(WORDS) for _ in range(12))
        text = f"Message {i}: {words}."
        if i == n // 3:
            text = "The hotel booking reference for Lisbon is QX-4471, check-in on May 3."
        if role == "user":
            turns.append(Turn(memory=memory, number=turn, input=text))
        entries.append(
            Entry(
                memory=memory,
                seq=i + 1,
                turn=turn,
                kind="message",
                role=role,
                content=text,
                tokens=message_tokens({"content": text}),
                created_at=now,
            )
        )
    for chunk in range(0, n, 5000):
        Turn.objects.bulk_create([t for t in turns if chunk // 2 < t.number <= (chunk + 5000) // 2])
        Entry.objects.bulk_create(entries[chunk : chunk + 5000])
    ids = list(Entry.objects.filter(memory=memory).values_list("id", flat=True))
    for chunk in range(0, len(ids), 5000):
        recall.index_entries(memory_id=memory.id, entry_ids=ids[chunk : chunk + 5000])
    Memory.objects.filter(pk=memory.pk).update(
        last_seq=n,
        last_turn=(n + 1) // 2,
        message_count=n,
        token_count=sum(e.tokens for e in entries),
        background_upto_seq=n,
    )


def measure(n: int, calls: int = 30, budget: int = 60000) -> dict:
    from memories import services
    from memories.models import Memory
    from projects import services as project_services
    from projects.models import Project

    started = time.perf_counter()
    project = Project.objects.filter(name=f"measure {n}").first()  # a kept var dir is reused
    if project is not None:
        memory = Memory.objects.get(project=project)
    else:
        project = project_services.project_create(name=f"measure {n}")
        memory, _ = services.memory_create(project=project)
        build(memory, n)
    built = time.perf_counter() - started
    timings, recalled = [], 0
    for i in range(calls):
        memory = Memory.objects.get(pk=memory.pk)
        question = {"role": "user", "content": f"What was the hotel booking reference for Lisbon? ({i})"}
        t0 = time.perf_counter()
        answer = services.memory_decorate(memory=memory, messages=[question], budget_tokens=budget)
        timings.append((time.perf_counter() - t0) * 1000)
        recalled = max(recalled, sum("QX-4471" in h["snippet"] for h in answer["context"]["recalled"]))
    timings.sort()
    plain = []
    for i in range(calls):
        memory = Memory.objects.get(pk=memory.pk)
        t0 = time.perf_counter()
        services.memory_decorate(
            memory=memory,
            messages=[{"role": "user", "content": f"hotel booking? {i}"}],
            budget_tokens=budget,
            recall=False,
            store=False,
        )
        plain.append((time.perf_counter() - t0) * 1000)
    from memories import recall

    search_ms = []
    for _ in range(calls):
        t0 = time.perf_counter()
        recall.search(memory_id=memory.id, query=question["content"], limit=5, before_seq=n - 2000)
        search_ms.append((time.perf_counter() - t0) * 1000)
    return {
        "recall_search_median_ms": round(statistics.median(search_ms), 2),
        "no_recall_dry_run_median_ms": round(statistics.median(plain), 2),
        "messages": n,
        "build_s": round(built, 1),
        "median_ms": round(statistics.median(timings), 2),
        "p90_ms": round(timings[int(len(timings) * 0.9) - 1], 2),
        "window_messages": len(answer["messages"]),
        "recalled_needle": bool(recalled) if n * 20 > budget else None,
    }


def main(sizes: list[int]) -> None:
    os.environ.setdefault("THREADLESS_VAR_DIR", tempfile.mkdtemp(prefix="tl-measure-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
    os.environ.pop("DATABASE_URL", None) if os.environ.get("MEASURE_SQLITE") else None
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    for n in sizes:
        print(measure(n), flush=True)


if __name__ == "__main__":
    main([int(x) for x in sys.argv[1:]] or [100, 100_000])
