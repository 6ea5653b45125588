"""Semantic recall's cost (part of `make bench`): decorate with `off` and with the default
(`local`) at 100 / 10,000 / 100,000 messages, the query embedding alone, and the worker's
indexing throughput.

    .venv/bin/python -m bench.recall_cost [--sizes 100,10000,100000] [--calls 30] [--json PATH]

Each memory is built in bulk (`bench.memory_builder.populate_indexed`, a throwaway SQLite database)
and every message gets a row of vectors: real all-MiniLM-L6-v2 vectors of a pool of the memory's
texts and their sentences, 1–4 vectors a row (2.5 on average, as chat turns have), so the codes scan
covers the whole memory. decorate (budget 2,000 tokens, a question not in the window, not stored)
runs in process, the two providers alternated call by call; `local` embeds its query each call, so
its figure includes one model call, which runs in the process's query batcher beside the window's
and the words' reads (`embeddings.embed_query_soon`). Targets per size: local ≤ off + one query
embedding + 5 ms (medians of the time a decorate takes), and the CPU a decorate costs the process
(every thread's, the model's included: the overlap shortens the wait, not the work) local ≤ off +
5 ms. Indexing: `embeddings.embed_entries` + `recall.index_entries` over fresh chat turns, in
messages and texts per second, beside the runtime's own texts per second on the same texts in the
worker's batches (target: the gap ≤ 30 %).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from bench.django_setup import setup
from bench.memory_builder import populate_indexed, word_messages

QUESTION = "What did we decide about the hotel booking for the trip? ({})"
POOL = 64  # distinct vectors, reused round the memory
TURNS = [
    "We spent the weekend at the lake with the kids. My sister taught me to sail her dinghy. Then we grilled "
    "fish.",
    "That sounds lovely! Did the kids enjoy the boat?",
    "I have a beagle called Biscuit who sleeps on the sofa all day.",
    "The quarterly budget review moved to Thursday. Remember to send the slides before the board meeting.",
]


def _vectors(memory, provider) -> None:
    """Every message of the memory gets a row of 1–4 real vectors from a pool."""
    from memories import embeddings
    from memories.models import Entry

    pool = provider.embed([f"{TURNS[i % len(TURNS)]} ({i})" for i in range(POOL)])
    model = embeddings.model_key(provider)
    rows = list(Entry.objects.filter(memory=memory, kind="message").values_list("id", "seq"))
    for start in range(0, len(rows), 5000):
        embeddings.VectorStore.put(
            memory_id=memory.id,
            model=model,
            items=[
                (e, s, [pool[(s + k) % POOL] for k in range(1 + s % 4)])
                for e, s in rows[start : start + 5000]
            ],
        )


def _ms(values: list[float]) -> dict:
    values = sorted(values)
    return {"p50": statistics.median(values) * 1000, "p95": values[int(0.95 * (len(values) - 1))] * 1000}


def measure(size: int, calls: int) -> dict:
    from memories import embeddings, services
    from projects import services as project_services

    provider = embeddings.LocalProvider()
    projects = {}
    for kind in ("off", "local"):
        projects[kind] = project_services.project_create(name=f"cost-{kind}-{size}")
        projects[kind].model_config = {"embeddings": {"provider": kind}}
        projects[kind].save(update_fields=["model_config"])
    memory, _ = services.memory_create(project=projects["off"])
    populate_indexed(memory, word_messages(size))
    _vectors(memory, provider)
    # populate_indexed() counts the messages in the database: decorate sizes its window by them
    memory.refresh_from_db()
    times: dict[str, list[float]] = {"off": [], "local": [], "embed": []}
    cpu: dict[str, list[float]] = {"off": [], "local": [], "embed": []}
    for i in range(calls + 2):
        for kind in ("off", "local"):
            memory.project = projects[kind]
            question = QUESTION.format(i)
            start, start_cpu = time.perf_counter(), time.process_time()
            services.memory_decorate(
                memory=memory,
                messages=[{"role": "user", "content": question}],
                budget_tokens=2000,
                store=False,
            )
            if i >= 2:  # two warm-up rounds: the model's load, the codes' first read
                times[kind].append(time.perf_counter() - start)
                cpu[kind].append(time.process_time() - start_cpu)
        start, start_cpu = time.perf_counter(), time.process_time()
        provider.embed([QUESTION.format(i)])
        if i >= 2:
            times["embed"].append(time.perf_counter() - start)
            cpu["embed"].append(time.process_time() - start_cpu)
    out = {name: _ms(values) for name, values in times.items()}
    out["cpu"] = {name: statistics.median(values) * 1000 for name, values in cpu.items()}
    return out


def indexing(messages: int = 200) -> dict:
    """The worker's indexing (vectors and lexical rows) in messages and texts (a message and its
    sentences) per second, beside the runtime's own passages per second on the same texts, in
    batches of the worker's size: the gap is what indexing adds to the model."""
    from memories import embeddings, recall, services
    from memories.models import Entry, RecallVector
    from projects import services as project_services

    project = project_services.project_create(name="cost-indexing")
    memory, _ = services.memory_create(project=project)
    populate_indexed(memory, word_messages(messages))
    entries = list(Entry.objects.filter(memory=memory).order_by("seq"))
    for n, entry in enumerate(entries):
        entry.content = f"{TURNS[n % len(TURNS)]} ({n})"
    Entry.objects.bulk_update(entries, ["content"])
    ids = [e.id for e in entries]
    provider = embeddings.LocalProvider()
    provider.embed(["warm up"])
    texts = [piece for entry in entries for piece in embeddings.pieces(entry.content)]
    start = time.perf_counter()
    for chunk in range(0, len(texts), embeddings.EMBED_BATCH):
        provider.embed(texts[chunk : chunk + embeddings.EMBED_BATCH])
    runtime = len(texts) / (time.perf_counter() - start)
    RecallVector.objects.filter(memory=memory).delete()
    start = time.perf_counter()
    for chunk in range(0, len(ids), 50):
        embeddings.embed_entries(memory_id=memory.id, entry_ids=ids[chunk : chunk + 50], provider=provider)
        recall.index_entries(memory_id=memory.id, entry_ids=ids[chunk : chunk + 50])
    seconds = time.perf_counter() - start
    return {"messages_s": len(ids) / seconds, "texts_s": len(texts) / seconds, "runtime_texts_s": runtime}


def markdown(results: dict) -> str:
    lines = [
        "## Semantic recall's cost (`bench/recall_cost.py`)",
        "",
        "decorate in process (budget 2,000 tokens, a question outside the window, not stored), SQLite, "
        "`off` and the default `local` alternated call by call on the same memory; every message has "
        "1–4 real MiniLM vectors (2.5 on average), so `local` scans the codes of the whole memory; its "
        "query embedding runs beside the window's and the words' reads. Target: local ≤ off + one query "
        "embedding + 5 ms (medians of the time a decorate takes); the CPU a decorate costs the process "
        "(every thread's, the model's included): local ≤ off + 5 ms (medians).",
        "",
        "| messages | off p50 / p95 ms | local p50 / p95 ms | query embedding p50 ms | local − off − "
        "embedding | target | CPU: off / local ms | CPU: local − off | target | query embedding CPU |",
        "|---:|---:|---:|---:|---:|:--:|---:|---:|:--:|---:|",
    ]
    for size, r in results["sizes"].items():
        extra = r["local"]["p50"] - r["off"]["p50"] - r["embed"]["p50"]
        cpu = r["cpu"]["local"] - r["cpu"]["off"]
        lines.append(
            f"| {int(size):,} | {r['off']['p50']:.1f} / {r['off']['p95']:.1f} | "
            f"{r['local']['p50']:.1f} / {r['local']['p95']:.1f} | {r['embed']['p50']:.1f} | "
            f"{extra:+.1f} ms | {'✅' if extra <= 5 else '❌'} | "
            f"{r['cpu']['off']:.1f} / {r['cpu']['local']:.1f} | "
            f"{cpu:+.1f} ms | {'✅' if cpu <= 5 else '❌'} | {r['cpu']['embed']:.1f} ms |"
        )
    index = results["indexing"]
    gap = 1 - index["texts_s"] / index["runtime_texts_s"]
    lines += [
        "",
        f"Worker indexing with `local` (vectors of each message and its sentences, and the lexical "
        f"rows): **{index['messages_s']:.0f} messages/s**, {index['texts_s']:.0f} texts/s (chat turns of 1–3 "
        f"sentences); the runtime alone on the same texts in the worker's batches: "
        f"{index['runtime_texts_s']:.0f} texts/s (gap {gap:.0%}; target ≤ 30 % "
        f"{'✅' if gap <= 0.3 else '❌'}).",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,10000,100000")
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    setup(
        temp_var="tl-recall-cost-",
        log_level="WARNING",
        migrate=True,
        cache_table=True,
        THREADLESS_RATE_LIMIT_PER_MINUTE="0",
    )
    results = {"sizes": {}, "indexing": indexing()}
    for size in [int(s) for s in args.sizes.split(",") if s]:
        results["sizes"][str(size)] = measure(size, args.calls)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=1)
    print(markdown(results))


if __name__ == "__main__":
    main()
