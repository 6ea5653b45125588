"""Threads' cost: decorate in one thread of a memory with many threads against decorate in a
one-thread memory with the same window, and the history import's throughput.

    .venv/bin/python -m bench.threads_cost [--threads 1000] [--per-thread 100] [--calls 40]

Builds (in a throwaway database: SQLite, or PostgreSQL when DATABASE_URL is set) a memory of
`threads` threads of `per-thread` messages each, imported through `messages_import` (the route's
service, with its validation and its JSON body parsed as the view does) 2,000 messages a call
where a thread allows, and a one-thread memory of as many messages; both get their recall index
as the worker leaves it. Then decorate (stored; recall off, then on) in the middle thread of the
first and in the second, called in turn, with a budget that holds about `per-thread` messages, so
both windows are the same size and, with recall, both search the whole memory (the thread's best
match usually lies in another thread, so its recall block takes the larger, looking-back share:
decorate's third window fit at most). Prints each decorate's median and p90 (ms; and the
median CPU of the measuring thread, which leaves out the wait for a core on a shared machine) and
the import's seconds for every 10,000 messages.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime, timedelta

import orjson

from bench.django_setup import setup

WORDS = "hotel booking flight train museum budget recipe garden invoice meeting project deadline".split()


def _messages(n: int, start: datetime, label: str) -> list[dict]:
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"{label} message {i}: {WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]} notes.",
            "created_at": (start + timedelta(seconds=i)).isoformat(),
        }
        for i in range(n)
    ]


def _import(memory, thread: str, messages: list[dict]) -> float:
    """Seconds to import `messages` into the thread, 2,000 a call, as the route does it."""
    from common.messages import validate_messages
    from memories.services import messages_import

    took = 0.0
    for at in range(0, len(messages), 2000):
        body = orjson.dumps({"thread": thread, "messages": messages[at : at + 2000]})
        began = time.perf_counter()
        data = orjson.loads(body)
        messages_import(
            memory=memory, thread=data["thread"], raw_messages=data["messages"], validate=validate_messages
        )
        took += time.perf_counter() - began
    return took


def _index(memory) -> None:
    from memories import recall
    from memories.models import Entry

    ids = list(Entry.objects.filter(memory=memory, kind="message").values_list("id", flat=True))
    for at in range(0, len(ids), 5000):
        recall.index_entries(memory_id=memory.id, entry_ids=ids[at : at + 5000])


def _decorate_ms(cases: list[tuple], budget: int, calls: int, recall: bool) -> list[tuple[float, float]]:
    """(p50, p90) ms of decorate in each (memory, thread) of `cases`, called in turn (so the
    machine's load weighs on each alike)."""
    from memories.models import Memory
    from memories.services import memory_decorate

    times: list[list[float]] = [[] for _ in cases]
    cpu: list[list[float]] = [[] for _ in cases]
    for i in range(calls):
        for (memory, thread), out, spent in zip(cases, times, cpu, strict=True):
            current = Memory.objects.get(pk=memory.pk)
            began, began_cpu = time.perf_counter(), time.thread_time()
            memory_decorate(
                memory=current,
                messages=[{"role": "user", "content": f"what did we say about the hotel booking? ({i})"}],
                budget_tokens=budget,
                thread=thread,
                recall=recall,
            )
            out.append((time.perf_counter() - began) * 1000)
            spent.append((time.thread_time() - began_cpu) * 1000)
    return [
        (statistics.median(t), sorted(t)[int(len(t) * 0.9)], statistics.median(c))
        for t, c in zip(times, cpu, strict=True)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1000)
    parser.add_argument("--per-thread", type=int, default=100)
    parser.add_argument("--calls", type=int, default=40)
    args = parser.parse_args()
    setup(temp_var="threads_cost", migrate=True, THREADLESS_RATE_LIMIT_PER_MINUTE="0")
    from django.db import connection

    from memories.services import memory_create
    from projects.services import project_create

    project = project_create(name="threads cost")
    start = datetime.now(UTC) - timedelta(days=400)
    many, _ = memory_create(project=project)
    imported = 0.0
    for t in range(args.threads):
        imported += _import(many, f"t{t}", _messages(args.per_thread, start + timedelta(hours=t), f"t{t}"))
    one, _ = memory_create(project=project)
    total = args.threads * args.per_thread
    one_took = _import(one, "default", _messages(total, start, "one"))
    _index(many)
    _index(one)
    from memories.models import Memory

    tokens = Memory.objects.get(pk=one.pk).token_count / total
    budget = int(tokens * args.per_thread * 1.5)  # the window holds about per-thread messages
    middle = f"t{args.threads // 2}"
    print(f"database: {connection.vendor}; {total:,} messages; budget {budget} tokens")
    cases = [(many, middle), (one, None)]
    _decorate_ms(cases, budget, 3, True)  # warm: the query embedding's model, the statements
    for recall in (False, True):
        (many_ms, one_ms) = _decorate_ms(cases, budget, args.calls, recall)
        label = "with recall" if recall else "window only"
        for where, (p50, p90, cpu) in (
            (f"{middle} of {args.threads:,} threads", many_ms),
            ("one thread", one_ms),
        ):
            print(f"decorate {label}, in {where}: p50 {p50:.2f}, p90 {p90:.2f} ms (CPU p50 {cpu:.2f} ms)")
    per_10k = imported / total * 10_000
    print(f"import, {args.per_thread} a call into {args.threads:,} threads: {per_10k:.2f} s per 10,000")
    print(f"import, 2,000 a call into one thread: {one_took / total * 10_000:.2f} s per 10,000")


if __name__ == "__main__":
    main()
