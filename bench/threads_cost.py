"""Threads' cost (part of `make bench`): decorate and report in one thread of a memory with many
threads against the same calls in a one-thread memory of the same size and window, and the
history import's throughput, accepted and until the worker has processed it.

    .venv/bin/python -m bench.threads_cost [--threads 1000] [--per-thread 100] [--calls 60]
                                           [--import-messages 10000] [--providers off,local] [--json PATH]

Runs in a throwaway database: SQLite, or PostgreSQL when DATABASE_URL is set. Everything goes
through the HTTP API in process (Django's test client: the routes' own parsing, validation and
services, no socket), except decorate and report, which are timed as services (the figure the
rest of docs/benchmarks.md gives for them; the route adds the same in both memories).

* The memories: `threads` threads of `per-thread` messages each, imported `per-thread` a call
  (`POST …/messages`), and a one-thread memory of the same messages in the same order, imported
  2,000 a call (so only the threads differ, not what recall finds); both get their recall index as
  the worker leaves it. Embeddings off, so recall is the index alone (the
  query embedding costs the same in both; its cost is `bench/recall_cost.py`'s).
* decorate (stored) in the middle thread of the first and in the second, called in turn with a
  budget that holds about `per-thread` messages, so both windows are the same size: window only,
  then with recall (which searches the whole memory in both). The floor is the one-thread memory,
  measured in the same run; target: the many-thread figure within TARGET× of it.
* report of one assistant message after each such decorate, in the same thread (a named thread's
  report against the default thread's).
* The import: `import-messages` messages into a fresh memory's thread, 2,000 a call: messages per
  second accepted (202: durably stored), and until processed (the outbox run as the worker runs it
  until it is empty: the recall index, the vectors with `local`, facts, compaction), per embeddings
  provider.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from datetime import UTC, datetime, timedelta

from bench.django_setup import setup

TARGET = 1.2  # a decorate or report in one of many threads, × the one-thread memory's
WORDS = "hotel booking flight train museum budget recipe garden invoice meeting project deadline".split()
TITLE = "## 10. Threads and the history import (`bench/threads_cost.py`)"


def _messages(n: int, start: datetime, label: str) -> list[dict]:
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"{label} message {i}: {WORDS[i % len(WORDS)]} {WORDS[(i * 7) % len(WORDS)]} notes.",
            "created_at": (start + timedelta(seconds=i)).isoformat(),
        }
        for i in range(n)
    ]


class Api:
    """POSTs to the API in process, with a project key of `project`."""

    def __init__(self, project):
        from django.test import Client

        from projects.services import key_create

        _, plaintext = key_create(project=project, name="threads cost")
        self.client = Client(headers={"Authorization": f"Bearer {plaintext}"})

    def post(self, path: str, body: bytes, status: int) -> None:
        answer = self.client.post(f"/v1/{path}", data=body, content_type="application/json")
        if answer.status_code != status:
            raise SystemExit(f"POST /v1/{path}: {answer.status_code} {answer.content[:300]!r}")


def _import(api: Api, memory_id: str, thread: str, messages: list[dict], per_call: int) -> float:
    """Seconds the route takes to accept `messages` into the thread, `per_call` a call."""
    took = 0.0
    for at in range(0, len(messages), per_call):
        body = json.dumps({"thread": thread, "messages": messages[at : at + per_call]}).encode()
        began = time.perf_counter()
        api.post(f"memories/{memory_id}/messages", body, 202)
        took += time.perf_counter() - began
    return took


def _index(memory) -> None:
    from memories import recall
    from memories.models import Entry

    ids = list(Entry.objects.filter(memory=memory, kind="message").values_list("id", flat=True))
    for at in range(0, len(ids), 5000):
        recall.index_entries(memory_id=memory.id, entry_ids=ids[at : at + 5000])


def _stat(wall: list[float], cpu: list[float]) -> dict:
    wall = sorted(wall)
    return {
        "p50": statistics.median(wall),
        "p95": wall[int(0.95 * (len(wall) - 1))],
        "cpu": statistics.median(cpu),
    }


def _calls(cases: list[tuple], budget: int, calls: int, recall: bool) -> list[dict]:
    """{"decorate": stat, "report": stat} (ms) in each (memory, thread) of `cases`: a stored decorate,
    then a report of one reply in the same thread, the cases called in turn (so the machine's load
    weighs on each alike)."""
    from common.messages import validate_messages
    from memories.models import Memory
    from memories.services import memory_decorate, report_accept

    times = [{"decorate": ([], []), "report": ([], [])} for _ in cases]
    for i in range(calls):
        for (memory, thread), out in zip(cases, times, strict=True):
            current = Memory.objects.select_related("project").get(pk=memory.pk)
            began, began_cpu = time.perf_counter(), time.thread_time()
            memory_decorate(
                memory=current,
                messages=validate_messages(
                    [{"role": "user", "content": f"what did we say about the hotel booking? ({i})"}]
                ),
                budget_tokens=budget,
                thread=thread,
                recall=recall,
            )
            out["decorate"][0].append((time.perf_counter() - began) * 1000)
            out["decorate"][1].append((time.thread_time() - began_cpu) * 1000)
            began, began_cpu = time.perf_counter(), time.thread_time()
            report_accept(
                memory=current,
                messages=validate_messages([{"role": "assistant", "content": f"We booked the hotel ({i})."}]),
                failures=[],
                thread=thread,
            )
            out["report"][0].append((time.perf_counter() - began) * 1000)
            out["report"][1].append((time.thread_time() - began_cpu) * 1000)
    return [{k: _stat(*v) for k, v in t.items()} for t in times]


def _import_throughput(provider: str, total: int) -> dict:
    """`total` messages imported into a fresh memory's thread, 2,000 a call, then processed as the
    worker does: {"accepted_s", "processed_s"} in messages per second (processed: from the first
    call until the outbox is empty)."""
    from memories.services import memory_create, outbox_process_next
    from projects.services import project_create

    project = project_create(name=f"import {provider}")
    project.model_config = {"embeddings": {"provider": provider}}
    project.save(update_fields=["model_config"])
    api = Api(project)
    memory, _ = memory_create(project=project)
    messages = _messages(total, datetime.now(UTC) - timedelta(days=30), "history")
    began = time.perf_counter()
    accepted = _import(api, memory.id, "history", messages, 2000)
    while outbox_process_next():
        pass
    processed = time.perf_counter() - began
    return {"messages": total, "accepted_s": total / accepted, "processed_s": total / processed}


def measure(args) -> dict:
    from django.db import connection
    from django.utils import timezone

    from memories import embeddings
    from memories.models import Memory, Outbox
    from memories.services import memory_create
    from projects.services import project_create

    project = project_create(name="threads cost")
    project.model_config = {"embeddings": {"provider": "off"}}
    project.save(update_fields=["model_config"])
    api = Api(project)
    start = datetime.now(UTC) - timedelta(days=400)
    threads = [_messages(args.per_thread, start + timedelta(hours=t), f"t{t}") for t in range(args.threads)]
    many, _ = memory_create(project=project)
    many_took = 0.0
    for t, messages in enumerate(threads):
        many_took += _import(api, many.id, f"t{t}", messages, args.per_thread)
    # The same messages, in the same order, all in one thread: only where they were said differs.
    one, _ = memory_create(project=project)
    total = args.threads * args.per_thread
    one_took = _import(api, one.id, "default", [m for messages in threads for m in messages], 2000)
    _index(many)
    _index(one)
    if connection.vendor == "postgresql":
        # Statistics, as autovacuum would have taken them after such a load (it may be off here):
        # without them the planner reads a term's every row in the memory instead of the newest.
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    tokens = Memory.objects.get(pk=one.pk).token_count / total
    budget = int(tokens * args.per_thread * 1.5)  # the window holds about per-thread messages
    middle = f"t{args.threads // 2}"
    cases = [(many, middle), (one, None)]
    _calls(cases, budget, 3, True)  # warm: the statements, the caches
    calls = {}
    for recall in (False, True):
        many_stat, one_stat = _calls(cases, budget, args.calls, recall)
        calls["recall" if recall else "window"] = {"many": many_stat, "one": one_stat}
    imports = {
        "many": {"messages": total, "per_call": args.per_thread, "accepted_s": total / many_took},
        "one": {"messages": total, "per_call": 2000, "accepted_s": total / one_took},
    }
    # The two memories' queued background work (their stored turns) is not the import's to run.
    Outbox.objects.filter(processed_at=None).update(processed_at=timezone.now())
    providers = [p for p in args.providers.split(",") if p]
    if "local" in providers and not embeddings.available_local():
        providers.remove("local")
    throughput = {p: _import_throughput(p, args.import_messages) for p in providers}
    return {
        "database": connection.vendor,
        "threads": args.threads,
        "per_thread": args.per_thread,
        "messages": total,
        "budget": budget,
        "calls": args.calls,
        "decorate_report": calls,
        "imports": imports,
        "throughput": throughput,
    }


def _ratio(many: dict, one: dict) -> str:
    wall, cpu = many["p50"] / one["p50"], many["cpu"] / one["cpu"]
    return f"{wall:.2f}× {'✅' if wall <= TARGET else '❌'} / {cpu:.2f}× {'✅' if cpu <= TARGET else '❌'}"


def markdown(r: dict) -> str:
    database = "SQLite" if r["database"] == "sqlite" else "PostgreSQL"
    threads, total = f"{r['threads']:,}", f"{r['messages']:,}"
    lines = [
        TITLE,
        "",
        f"{database}, in process. One memory of {threads} threads × {r['per_thread']} messages "
        f"({total} messages) against a one-thread memory of the same {total} messages in the same "
        f"order; a budget of {r['budget']:,} tokens, so both windows hold about {r['per_thread']} "
        f"messages. Each call a stored decorate in the middle thread (t{r['threads'] // 2}) or the one "
        "thread, then a report of one reply in the same thread, the two memories called in turn, "
        f"{r['calls']} times each; embeddings off. Median / p95 ms (median CPU of the measuring "
        "thread). The floor is the one-thread memory in the same run; target: within "
        f"{TARGET}× of it (wall / CPU).",
        "",
        f"| call | in one of {threads} threads | one-thread memory (floor) | ratio (p50 wall / CPU) |",
        "|---|---:|---:|---:|",
    ]
    for key, label in (("window", "window only"), ("recall", "with recall over the whole memory")):
        for call, what in (("decorate", f"decorate, {label}"), ("report", "report of its reply")):
            many, one = r["decorate_report"][key]["many"][call], r["decorate_report"][key]["one"][call]
            lines.append(f"| {what} | {_cell(many)} | {_cell(one)} | {_ratio(many, one)} |")
    lines += [
        "",
        "History import (`POST /v1/memories/{id}/messages` in process): messages per second accepted "
        "(202: stored durably, the background work queued), and until processed (from the first call "
        "until the outbox is empty, run as the worker runs it: the recall index, the vectors with "
        "`local`, facts, compaction).",
        "",
        "| import | messages | a call | accepted, messages/s | processed, messages/s |",
        "|---|---:|---:|---:|---:|",
        f"| into {threads} threads | {total} | {r['imports']['many']['per_call']:,} | "
        f"{r['imports']['many']['accepted_s']:,.0f} | — |",
        f"| into one thread | {total} | {r['imports']['one']['per_call']:,} | "
        f"{r['imports']['one']['accepted_s']:,.0f} | — |",
    ]
    for provider, t in r["throughput"].items():
        lines.append(
            f"| into one thread, embeddings `{provider}` | {t['messages']:,} | 2,000 | "
            f"{t['accepted_s']:,.0f} | {t['processed_s']:,.0f} |"
        )
    return "\n".join(lines)


def _cell(s: dict) -> str:
    return f"{s['p50']:.2f} / {s['p95']:.2f} ({s['cpu']:.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1000)
    parser.add_argument("--per-thread", type=int, default=100)
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--import-messages", type=int, default=10_000)
    parser.add_argument("--providers", default="off,local", help="embeddings providers for the import")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    setup(
        temp_var="tl-threads-cost-", log_level="WARNING", migrate=True, THREADLESS_RATE_LIMIT_PER_MINUTE="0"
    )
    results = measure(args)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)
    print(markdown(results))


if __name__ == "__main__":
    main()
