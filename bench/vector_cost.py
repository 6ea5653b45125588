"""decorate's CPU cost with an embedding provider on, by how many vectors a message's row holds.

    .venv/bin/python -m bench.vector_cost [--sizes 100,100000] [--vectors 1,3,9] [--blocks 5]
                                          [--base PATH/TO/OTHER/memories/embeddings.py]

A row holds the whole message's vector and, for a message of several sentences, one per sentence
(memories/embeddings.py): a chatty conversation has ~3.5 a row, a message of 8+ sentences 9, the
most. For each memory size (bulk-built as `bench.recall_measure.build` does, in a throwaway SQLite
database) the newest 5,000 messages get random unit 384-d vectors (decorate's scan reads at most
DENSE_SCAN_CAP = 2,000 rows, newest first); `context_build` then runs with a question at 2,000 and
60,000 tokens. The query's vector is computed once and reused: its one model call is the same in
every arm, and only the stored side is measured. CPU time of the whole process (`process_time`:
any helper thread a library wakes counts too), median and quartiles of `--blocks` × 8 calls.

`--base`: another checkout's `memories/embeddings.py` (e.g. a `git worktree` of an older commit),
loaded beside this one and swapped in block by block as one more arm, with one vector a row (the
only layout an older store knows). Ratios are against that arm when given, else against this
code with one vector a row.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import tempfile
import time

QUESTION = "What was the hotel booking reference for Lisbon? ({})"
MODEL = "bench:random-384"
SWAPPED = ("neighbourhood", "source_similarity")


def _setup() -> None:
    os.environ.setdefault("THREADLESS_VAR_DIR", tempfile.mkdtemp(prefix="tl-vector-cost-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def _load(path: str):
    spec = importlib.util.spec_from_file_location("bench_base_embeddings", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(sizes: list[int], vectors: list[int], blocks: int, base_path: str = "") -> list[dict]:
    import numpy

    from bench.recall_measure import build
    from memories import context, embeddings, services
    from memories.models import Entry, RecallVector
    from projects import services as project_services

    rng = numpy.random.default_rng(3)

    def unit(n: int) -> list[list[float]]:
        m = rng.standard_normal((n, 384)).astype(numpy.float32)
        return (m / numpy.linalg.norm(m, axis=1, keepdims=True)).tolist()

    query = unit(1)[0]
    embeddings.embed_query = lambda project, text: (MODEL, query)
    this = {name: getattr(embeddings, name) for name in SWAPPED}
    arms = [("this", k) for k in vectors]
    codes = {"this": this}
    if base_path:
        base = _load(base_path)
        codes["base"] = {name: getattr(base, name) for name in SWAPPED}
        arms.insert(0, ("base", 1))
    out = []
    try:
        for n in sizes:
            project = project_services.project_create(name=f"vector cost {n}")
            project.model_config = {"embeddings": {"provider": "local"}}
            project.save(update_fields=["model_config"])
            memory, _ = services.memory_create(project=project)
            build(memory, n)
            memory.refresh_from_db()
            rows = list(Entry.objects.filter(memory=memory).order_by("-seq").values_list("id", "seq")[:5000])
            stored = {k: [(e, s, unit(k) if k > 1 else unit(1)[0]) for e, s in rows] for k in {k for _, k in arms}}
            times: dict[tuple, list[float]] = {(arm, budget): [] for arm in arms for budget in (2000, 60000)}
            for _ in range(blocks):
                for arm in arms:
                    code, k = arm
                    for name, fn in codes[code].items():
                        setattr(embeddings, name, fn)
                    RecallVector.objects.filter(memory=memory).delete()
                    for i in range(0, len(stored[k]), 1000):
                        embeddings.VectorStore.put(memory_id=memory.id, model=MODEL, items=stored[k][i:i + 1000])
                    for budget in (2000, 60000):
                        for call in range(8):
                            ask = [{"role": "user", "content": QUESTION.format(call)}]
                            started = time.process_time()
                            context.context_build(memory=memory, new_messages=ask, budget_tokens=budget)
                            times[(arm, budget)].append((time.process_time() - started) * 1000)
            for budget in (2000, 60000):
                reference = statistics.median(times[(arms[0], budget)])
                for arm in arms:
                    ts = times[(arm, budget)]
                    q1, _, q3 = statistics.quantiles(ts, n=4)
                    out.append({"messages": n, "budget": budget, "code": arm[0], "vectors_per_row": arm[1],
                                "median_ms": round(statistics.median(ts), 2), "q1_ms": round(q1, 2),
                                "q3_ms": round(q3, 2), "ratio": round(statistics.median(ts) / reference, 2)})
    finally:
        for name, fn in this.items():
            setattr(embeddings, name, fn)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,100000")
    parser.add_argument("--vectors", default="1,3,9", help="vectors a row, one arm each")
    parser.add_argument("--blocks", type=int, default=5)
    parser.add_argument("--base", default="", help="another checkout's memories/embeddings.py, as one more arm")
    args = parser.parse_args()
    _setup()
    results = run([int(x) for x in args.sizes.split(",")], [int(x) for x in args.vectors.split(",")],
                  args.blocks, args.base)
    print("| messages | budget | code | vectors a row | CPU ms, median (q1–q3) | ratio |")
    print("|---:|---:|---|---:|---:|---:|")
    for r in results:
        print(f"| {r['messages']:,} | {r['budget']:,} | {r['code']} | {r['vectors_per_row']} | "
              f"{r['median_ms']} ({r['q1_ms']}–{r['q3_ms']}) | {r['ratio']}× |")


if __name__ == "__main__":
    main()
