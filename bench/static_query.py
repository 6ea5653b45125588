"""A query-side static embedding in MiniLM's own vector space: an experiment, not product code
(docs/tuning/recall.md, "Tried, not kept").

A query is embedded without running the model: the normalised weighted sum of its tokens' rows in
a table of 30,522 × 384 vectors made by the local model (all-MiniLM-L6-v2 on ONNX Runtime,
`providers.minilm`). Stored messages keep their MiniLM vectors; only the query changes. A variant
is `table:weights`. Tables:

* `pooled`  — the model's vector of each token alone (`[CLS] token [SEP]`, mean-pooled and
  normalised as the provider pools); [CLS]/[SEP] left out of the query's sum;
* `alone`   — the token's own last hidden state in `[CLS] token [SEP]` (before pooling);
* `context` — each token's last hidden state averaged over the memory's own stored messages (what
  the worker's model call computes anyway), `alone` for tokens never seen; [CLS]/[SEP] kept, as
  the model pools them;
* `others`  — the same averaged over the stored messages of the LoCoMo tuning conversations other
  than the memory's own (a fixed table from other text).

Weights: `mean` (none); `sif` a / (a + p(token)), p the token's share of the memory's stored
messages, a = 1e-3; `idf` log((N + 1) / (df + 0.5)) over them. Frequencies and tables come from
stored messages only, never from LoCoMo's questions or answers. The model-made tables are cached
in the system's temp directory (~20 s each to build).

    .venv/bin/python -m bench.static_query table     # builds the `pooled` and `alone` tables
    .venv/bin/python -m bench.static_query cosine [--variants ...] [--halves tune]
    .venv/bin/python -m bench.static_query cpu --variants others:idf   # µs of CPU a query, 3 ways
    HF_HUB_OFFLINE=1 .venv/bin/python -m bench.static_query recall --halves tune \
        --variants context:sif,others:idf [--corpus-halves dev] [--providers off,local] [--json out.json]

`cosine`: the static vector against MiniLM's vector of the same LoCoMo question. `cpu`: this
thread's CPU per question for the static vector, MiniLM one query a call and MiniLM 16 a call, in
alternating rounds. `recall` runs `bench.recall_bench.run_locomo` (the one-thread form; `--halves ""`
skips it) and, with `--corpus-halves`, `run_corpus`, for `off`, `local`, then `local` with the
query embedder swapped for each static variant: the bench process's `LocalProvider.embed_soon`
(decorate's and search's query) and the dense-only baseline are patched, and the LoCoMo memories
`local` ingested (with their MiniLM vectors) are asked again. LoCoMo data:
`bench.recall_bench.DEFAULT_LOCOMO` (never copied here).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import time
from collections import Counter
from concurrent.futures import Future
from pathlib import Path

import numpy

TABLE = Path(tempfile.gettempdir()) / "threadless-static-minilm.npy"
CLS, SEP = 101, 102
SIF_A = 1e-3


def _model():
    from providers.embeddings import _local_model

    return _local_model()


class Hidden:
    """The local model with its last hidden states as an output (the tensor it mean-pools)."""

    def __init__(self, model) -> None:
        import onnx
        import onnxruntime

        from providers import minilm
        from providers.embeddings import local_model_dir

        directory = local_model_dir()
        config = json.loads((directory / "config.json").read_text())
        proto = onnx.load_from_string(
            minilm._graph(minilm._weights_index(directory / "model.safetensors"), config, "model.safetensors")
        )
        made = {o: n for n in proto.graph.node for o in n.output}
        pool = next(n for n in proto.graph.node if n.op_type == "LpNormalization")
        hidden = made[made[made[pool.input[0]].input[0]].input[0]].input[0]  # Div ← ReduceSum ← Mul(x, mask)
        proto.graph.output.append(
            onnx.helper.make_tensor_value_info(hidden, onnx.TensorProto.FLOAT, ["batch", "tokens", model.dim])
        )
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.log_severity_level = 3
        options.add_session_config_entry(
            "session.model_external_initializers_file_folder_path", str(directory)
        )
        self.session = onnxruntime.InferenceSession(
            proto.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        self.model = model

    def run(self, ids: numpy.ndarray, mask: numpy.ndarray) -> numpy.ndarray:
        return self.session.run(None, {"input_ids": ids, "attention_mask": mask})[1]


def build_table(model, kind: str = "pooled") -> numpy.ndarray:
    """30,522 × 384 float32, each token alone (`[CLS] token [SEP]`): `pooled` is the model's
    (normalised, mean-pooled) vector of that; `alone` the token's own last hidden state in it."""
    path = TABLE.with_name(f"{TABLE.stem}-{kind}.npy")
    if path.exists():
        return numpy.load(path)
    hidden = Hidden(model) if kind == "alone" else None
    vocab = model.tokenizer.get_vocab_size()
    table = numpy.empty((vocab, model.dim), dtype=numpy.float32)
    started = time.perf_counter()
    for start in range(0, vocab, 1024):
        ids = numpy.arange(start, min(start + 1024, vocab), dtype=numpy.int64)
        batch = numpy.stack([numpy.full_like(ids, CLS), ids, numpy.full_like(ids, SEP)], axis=1)
        mask = numpy.ones_like(batch)
        if hidden is None:
            rows = model.session.run(None, {"input_ids": batch, "attention_mask": mask})[0]
        else:
            rows = hidden.run(batch, mask)[:, 1]
        table[start : start + len(ids)] = rows
    numpy.save(path, table)
    print(f"table {kind} {table.shape} built in {time.perf_counter() - started:.1f} s → {path}")
    return table


def context_table(model, texts: list[str], fallback: numpy.ndarray) -> numpy.ndarray:
    """Each token's last hidden state averaged over its occurrences in `texts` (a memory's stored
    messages, run through the model as the worker runs them); tokens never seen keep `fallback`'s
    row ([CLS] and [SEP] are seen in every text)."""
    from providers.minilm import groups, padded

    hidden = Hidden(model)
    total = numpy.zeros_like(fallback, dtype=numpy.float64)
    seen = numpy.zeros(len(fallback))
    ids = [model.tokenizer.encode(t).ids for t in texts]
    for run in groups([len(i) for i in ids], cap=4096):
        batch, mask = padded(ids, run)
        states = hidden.run(batch, mask)
        real = mask.astype(bool)
        numpy.add.at(total, batch[real], states[real])
        numpy.add.at(seen, batch[real], 1)
    table = fallback.copy()
    table[seen > 0] = (total[seen > 0] / seen[seen > 0, None]).astype(numpy.float32)
    return table


class Weights:
    """Token weights from a memory's stored messages (`sif`, `idf`) or none (`mean`)."""

    def __init__(self, kind: str, vocab: int, texts: list[str] | None = None, tokenizer=None) -> None:
        self.kind = kind
        self.w = numpy.ones(vocab, dtype=numpy.float32)
        if kind == "mean" or texts is None:
            return
        encoded = [e.ids[1:-1] for e in tokenizer.encode_batch(texts)]
        if kind == "sif":
            counts = Counter(t for ids in encoded for t in ids)
            total = sum(counts.values())
            for t, c in counts.items():
                self.w[t] = SIF_A / (SIF_A + c / total)
        elif kind == "idf":
            df = Counter(t for ids in encoded for t in set(ids))
            n = len(encoded)
            self.w[:] = math.log((n + 1) / 0.5)
            for t, c in df.items():
                self.w[t] = math.log((n + 1) / (c + 0.5))
        else:
            raise ValueError(kind)
        self.w[CLS] = self.w[SEP] = 1.0


class Static:
    """A query's static vector: the normalised weighted sum of its tokens' table rows. A variant is
    `table:weights`. Tables: `pooled` (each token's own sentence vector; [CLS]/[SEP] left out),
    `alone` (each token's last hidden state alone), `context` (each token's hidden state averaged
    over the memory's own stored messages, `alone` where unseen; [CLS]/[SEP] kept: the model pools
    them too), `others` (the same averaged over the stored messages of the LoCoMo tuning
    conversations other than the memory's own: a fixed table from other text)."""

    def __init__(self, model) -> None:
        self.model = model
        self.tables = {"pooled": build_table(model, "pooled"), "alone": build_table(model, "alone")}
        self.variant = "pooled:mean"
        self.tune = {f"locomo-{i}": [t["content"] for t in turns] for i, turns, _ in _locomo(("tune",))}
        self._context: dict[tuple, numpy.ndarray] = {}
        self._for: tuple | None = None

    def use(self, variant: str, label: str, texts: list[str]) -> None:
        """The variant for memory `label` whose stored messages are `texts` (its frequencies, and
        `context`'s rows)."""
        self.variant = variant
        table, kind = variant.split(":")
        if self._for == (variant, label):
            return
        self.weights = Weights(kind, len(self.tables["pooled"]), texts, self.model.tokenizer)
        if table in ("context", "others"):
            key = (table, label if table == "context" or label in self.tune else None)
            if key not in self._context:
                corpus = (
                    texts
                    if table == "context"
                    else [t for name, ts in self.tune.items() if name != label for t in ts]
                )
                self._context[key] = context_table(self.model, corpus, self.tables["alone"])
            self.table = self._context[key]
        else:
            self.table = self.tables[table]
        self.special = table in ("context", "others")
        self._for = (variant, label)

    def embed(self, text: str) -> numpy.ndarray:
        ids = self.model.tokenizer.encode(text).ids
        if not self.special and len(ids) > 2:
            ids = ids[1:-1]
        v = self.weights.w[ids] @ self.table[ids]
        return v / (numpy.linalg.norm(v) or 1.0)


def _locomo(halves=("tune",)):
    from bench import recall_bench as rb

    data = json.loads(Path(rb.DEFAULT_LOCOMO).read_text())
    picks = [i for half, p in (("tune", rb.TUNE), ("heldout", rb.HELDOUT)) if half in halves for i in p]
    return [(i, rb.locomo_turns(data[i]), rb.locomo_questions(data[i])) for i in picks if i < len(data)]


def cmd_cosine(args) -> None:
    model = _model()
    static = Static(model)
    rows = {}
    for index, turns, questions in _locomo(args.halves.split(",")):
        texts = [q["question"] for q in questions]
        real = model.embed(texts)
        stored = [t["content"] for t in turns]
        for kind in args.variants.split(","):
            static.use(kind, f"locomo-{index}", stored)
            got = numpy.stack([static.embed(t) for t in texts])
            rows.setdefault(kind, []).extend((got * real).sum(axis=1).tolist())
    print(f"cosine of the static query vector with MiniLM's, LoCoMo {args.halves} questions")
    print("| variant | n | mean | p10 | median | p90 | ≥ 0.9 | ≥ 0.95 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for kind, c in rows.items():
        a = numpy.array(c)
        print(
            f"| {kind} | {len(a)} | {a.mean():.3f} | {numpy.percentile(a, 10):.3f} | {numpy.median(a):.3f} "
            f"| {numpy.percentile(a, 90):.3f} | {(a >= 0.9).mean():.2f} | {(a >= 0.95).mean():.2f} |"
        )


def cmd_cpu(args) -> None:
    """CPU (this thread's) per query: static, MiniLM one query a call, MiniLM in calls of 16,
    in ABBA-style rounds over the same questions."""
    model = _model()
    static = Static(model)
    pairs = _locomo(("tune",))
    static.use(args.variants.split(",")[0], f"locomo-{pairs[0][0]}", [t["content"] for t in pairs[0][1]])
    texts = [q["question"] for _, _, qs in pairs for q in qs][: args.queries]
    model.embed(texts[:16])

    def run_static():
        for t in texts:
            static.embed(t)

    def run_single():
        for t in texts:
            model.embed([t])

    def run_batched():
        for i in range(0, len(texts), 16):
            model.embed(texts[i : i + 16])

    ways = {"static": run_static, "minilm one a call": run_single, "minilm 16 a call": run_batched}
    spent = {k: [] for k in ways}
    order = list(ways)
    for r in range(args.rounds):
        for name in order if r % 2 == 0 else order[::-1]:
            t0 = time.thread_time_ns()
            ways[name]()
            spent[name].append((time.thread_time_ns() - t0) / 1000 / len(texts))
    print(
        f"CPU per query (µs, this thread), {len(texts)} LoCoMo questions × {args.rounds} rounds, "
        f"load average {os.getloadavg()}"
    )
    print("| embedder | median µs | min µs | × static |")
    print("|---|---:|---:|---:|")
    base = numpy.median(spent["static"])
    for name, s in spent.items():
        print(f"| {name} | {numpy.median(s):.0f} | {min(s):.0f} | {numpy.median(s) / base:.0f} |")


def cmd_recall(args) -> None:
    from bench import recall_bench as rb

    rb.setup_django()
    from projects.services import project_create
    from providers.embeddings import LocalProvider

    path = Path(rb.DEFAULT_LOCOMO)
    halves = [h for h in args.halves.split(",") if h]
    corpus_halves = [h for h in args.corpus_halves.split(",") if h]
    results: dict[str, dict] = {}
    projects = {}
    for name in ("off", "local"):
        project = project_create(name=f"static-{name}")
        project.model_config = {"embeddings": {"provider": name}}
        project.save(update_fields=["model_config"])
        projects[name] = project

    def measure(label: str, project) -> None:
        results[label] = {}
        if halves:
            keep[0] = True
            results[label]["locomo"] = rb.run_locomo(
                path, project, label, halves, args.first, ("one-thread",)
            )
        if corpus_halves:
            keep[0] = False  # the corpus's memories get facts extracted: a fresh memory each time
            results[label]["corpus"] = rb.run_corpus(project, corpus_halves)
        print(label, json.dumps(results[label]), flush=True)

    # The LoCoMo memories `local` ingests are kept (decorate's one-thread form writes nothing) and
    # asked again with the static query; each memory's stored messages give the weights.
    model = _model()
    static = Static(model)
    ingested: dict[str, tuple] = {}
    keep = [True]
    ingest = rb.ingest

    def kept_ingest(project, turns, label):
        if label not in ingested or not keep[0]:
            ingested[label] = ingest(project, turns, label)
        static.use(static.variant, label, [t["content"] for t in turns])
        return ingested[label]

    if "off" in args.providers:
        measure("off", projects["off"])
    rb.ingest = kept_ingest
    measure("local", projects["local"])

    original_soon = LocalProvider.embed_soon
    original_dense = rb._dense_ranker

    def static_soon(self, text):
        future: Future = Future()
        future.set_result(static.embed(text).tolist())
        return future

    def static_dense(memory, ordered):
        from memories import embeddings

        provider = embeddings.provider_for(memory.project)
        model_key = embeddings.model_key(provider)

        def top(query, k):
            vector = static.embed(query).tolist()
            return [
                e
                for _, _, e in embeddings.nearest(memory_id=memory.id, model=model_key, query=vector, limit=k)
            ]

        return top

    LocalProvider.embed_soon = static_soon
    rb._dense_ranker = static_dense
    try:
        for kind in args.variants.split(","):
            static.variant = kind
            measure(f"static {kind}", projects["local"])
    finally:
        LocalProvider.embed_soon = original_soon
        rb._dense_ranker = original_dense
        rb.ingest = ingest
    print(f"\nLoCoMo {args.halves}: search top 5 / top 10 / decorate@2000 / dense-only top 10 (questions);")
    print(f"own corpus {args.corpus_halves}: search top 3 / answer in decorate (questions)")
    print("| query embedder | " + " | ".join(halves + corpus_halves) + " |")
    print("|---|" + "---|" * len(halves + corpus_halves))
    for label, r in results.items():
        cells = [
            f"{x['search@5']:.3f} / {x['search@10']:.3f} / {x['decorate@2000']:.3f} / "
            f"{x['dense@10'] if x['dense@10'] is not None else '–'} ({x['questions']})"
            for x in (r["locomo"][h] for h in halves)
        ] + [
            f"{x['search@3']:.3f} / {x['decorate']:.3f} ({x['questions']})"
            for x in (r["corpus"][h] for h in corpus_halves)
        ]
        print(f"| {label} | " + " | ".join(cells) + " |")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("table", "cosine", "cpu", "recall"))
    parser.add_argument(
        "--variants",
        default="pooled:mean,pooled:sif,alone:mean,alone:sif,context:mean,context:sif,context:idf",
        help="table:weights, comma-separated (cpu uses the first)",
    )
    parser.add_argument("--halves", default="tune")
    parser.add_argument("--corpus-halves", default="", help="own corpus halves too (dev, heldout)")
    parser.add_argument("--providers", default="off,local", help="off: also measure words only")
    parser.add_argument("--first", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--queries", type=int, default=384)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    if args.command == "recall":
        cmd_recall(args)
        return
    from bench.django_setup import setup

    setup(temp_var="tl-static-", log_level="WARNING")
    if args.command == "table":
        build_table(_model())
    elif args.command == "cosine":
        cmd_cosine(args)
    else:
        cmd_cpu(args)


if __name__ == "__main__":
    main()
