"""`make bench`: every benchmark, side by side in one run, written to docs/benchmarks.md with a
chart (docs/benchmarks.png).

Each backend runs in its own child process (`bench.measure`): the embedded default (SQLite)
and PostgreSQL + Redis. Options:

    python -m bench.run [--sizes 100,1000,10000,100000] [--backends sqlite,postgres]
                        [--budget SECONDS] [--no-peer] [--profile] [--no-redaction]

PostgreSQL runs on a fresh database the harness names, or on BENCH_PG_DATABASE (made fresh and
dropped after), at BENCH_PG_URL's server; Redis on dbs BENCH_REDIS_BROKER_DB / BENCH_REDIS_CACHE_DB
(default 11 / 10).

The redaction time vs input size table (bench/redaction_bench.py) runs in this process.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from bench import redaction_bench, threads_cost, webhooks_cost
from bench.common import BUDGET, DOCS, ROOT, SIZES, VAR, machine
from bench.load.report import BEGIN as LOAD_BEGIN
from bench.load.report import END as LOAD_END

TARGET_DECORATE = 1.5  # × the lower bound, at every size
TARGET_FLAT = 1.2  # decorate at 100k within 1.2× of 1k
TARGET_HTTP = 1.5  # decorate's HTTP cost above in-process within 1.5× a trivial round trip
TARGET_REPORT = 3.0  # × the lower bound's write (counters, message, outbox row, commit)


def log(*parts) -> None:
    print("[bench]", *parts, file=sys.stderr, flush=True)


def run_backend(backend: str, args) -> dict | None:
    out = VAR / f"{backend}.json"
    out.unlink(missing_ok=True)
    cmd = [
        sys.executable,
        "-m",
        "bench.measure",
        "--backend",
        backend,
        "--sizes",
        args.sizes,
        "--out",
        str(out),
        "--budget",
        str(args.budget),
    ]
    if backend == "sqlite" and not args.no_peer:
        cmd.append("--peer")
    if args.profile:
        cmd += ["--profile", str(VAR / f"profile-{backend}.txt")]
    env = dict(os.environ)
    if backend == "postgres":
        env["DATABASE_URL"] = os.environ.get("BENCH_PG_URL", "postgres://root@127.0.0.1:5432/postgres")
    log("running", " ".join(cmd[1:]))
    done = subprocess.run(cmd, cwd=ROOT, env=env, timeout=3600)
    if done.returncode != 0 or not out.exists():
        log(f"{backend}: failed with exit code {done.returncode}")
        return None
    return json.loads(out.read_text())


def ms(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def cell(stat: dict | None) -> str:
    if not stat:
        return "—"
    text = f"{ms(stat['median'])} / {ms(stat['p95'])}"
    if "cpu" in stat:
        text += f" ({ms(stat['cpu'])})"
    return text


def ratio(a: dict, b: dict, target: float) -> tuple[str, float, float | None]:
    """'wall× / cpu×' with a mark each; returns the text and both ratios."""
    wall = a["median"] / b["median"]
    cpu = a["cpu"] / b["cpu"] if a.get("cpu") and b.get("cpu") else None
    text = f"{wall:.2f}× {mark(wall <= target)}"
    if cpu is not None:
        text += f" / {cpu:.2f}× {mark(cpu <= target)}"
    return text, wall, cpu


def mark(ok: bool) -> str:
    return "✅" if ok else "❌"


def decorate_table(data: dict) -> tuple[list[str], list[dict]]:
    sizes = sorted(data["sizes"], key=int)
    has_peer = any("peer_read" in data["sizes"][s] for s in sizes)
    head = "| messages | lower bound | decorate (in process) | ratio | decorate, store=true | ratio |"
    sep = "|---:|---:|---:|---:|---:|---:|"
    if has_peer:
        head += " LangGraph peer | peer / lower bound |"
        sep += "---:|---:|"
    head += " same window |"
    sep += ":---:|"
    lines = [head, sep]
    verdicts = []
    for s in sizes:
        row = data["sizes"][s]
        lb = row["lower_bound"]["median"]
        t1, r1, c1 = ratio(row["decorate"], row["lower_bound"], TARGET_DECORATE)
        t2, r2, c2 = ratio(row["decorate_store"], row["lower_bound"], TARGET_DECORATE)
        check = data["window_checks"][s]
        same = (
            check["decorate_equals_lower_bound"]
            and check["http_equals_in_process"]
            and check.get("peer_equals_lower_bound", True)
        )
        line = (
            f"| {int(s):,} | {cell(row['lower_bound'])} | {cell(row['decorate'])} | {t1} | "
            f"{cell(row['decorate_store'])} | {t2} |"
        )
        if has_peer:
            peer = row.get("peer_read")
            line += f" {cell(peer)} | {peer['median'] / lb:,.1f}× |" if peer else " — | — |"
        line += f" {mark(same)} {check['decorate_messages'] - 1} msgs |"
        lines.append(line)
        verdicts.append(
            {
                "size": int(s),
                "ratio": r1,
                "ratio_cpu": c1,
                "ratio_store": r2,
                "ratio_store_cpu": c2,
                "same": same,
            }
        )
    return lines, verdicts


def http_table(data: dict) -> tuple[list[str], list[dict]]:
    lines = [
        "| messages | decorate over HTTP | decorate in process | HTTP cost above in process | GET "
        "/v1/memories/{id} round trip | ratio |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    verdicts = []
    for s in sorted(data["sizes"], key=int):
        row = data["sizes"][s]
        extra = row["http_decorate"]["median"] - row["decorate"]["median"]
        trivial = row["http_get_memory"]["median"]
        share = extra / trivial
        lines.append(
            f"| {int(s):,} | {cell(row['http_decorate'])} | {cell(row['decorate'])} | {ms(extra)} "
            f"| {cell(row['http_get_memory'])} | {share:.2f}× {mark(share <= TARGET_HTTP)} |"
        )
        verdicts.append({"size": int(s), "ratio": share})
    return lines, verdicts


def report_table(data: dict) -> tuple[list[str], list[dict]]:
    sizes = sorted(data["sizes"], key=int)
    has_peer = any("peer_write" in data["sizes"][s] for s in sizes)
    head = "| messages | lower bound write + commit | report accept | ratio |"
    sep = "|---:|---:|---:|---:|"
    if has_peer:
        head += " LangGraph `graph.invoke` (one exchange) |"
        sep += "---:|"
    lines = [head, sep]
    verdicts = []
    for s in sizes:
        row = data["sizes"][s]
        text, wall, cpu = ratio(row["report"], row["lower_bound_insert"], TARGET_REPORT)
        line = f"| {int(s):,} | {cell(row['lower_bound_insert'])} | {cell(row['report'])} | {text} |"
        if has_peer:
            line += f" {cell(row.get('peer_write'))} |"
        lines.append(line)
        verdicts.append({"size": int(s), "ratio": wall, "ratio_cpu": cpu})
    return lines, verdicts


def flatness(data: dict, name: str, key: str = "median") -> float | None:
    sizes = data["sizes"]
    if "1000" in sizes and "100000" in sizes and key in sizes["1000"][name]:
        return sizes["100000"][name][key] / sizes["1000"][name][key]
    return None


def chart(results: dict[str, dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    styles = {"sqlite": "-", "postgres": "--"}
    for backend, data in results.items():
        sizes = sorted(data["sizes"], key=int)
        xs = [int(s) for s in sizes]
        style = styles.get(backend, "-")
        for name, label, color in (
            ("lower_bound", "lower bound", "tab:gray"),
            ("decorate", "decorate (in process)", "tab:blue"),
            ("http_decorate", "decorate over HTTP", "tab:green"),
            ("peer_read", "LangGraph get_state + trim_messages", "tab:red"),
        ):
            ys = [data["sizes"][s].get(name, {}).get("median") for s in sizes]
            if all(y is not None for y in ys):
                left.plot(xs, ys, style, marker="o", color=color, label=f"{label} [{backend}]")
        for name, label, color in (
            ("lower_bound_insert", "lower bound write + commit", "tab:gray"),
            ("report", "report accept", "tab:blue"),
            ("peer_write", "LangGraph graph.invoke (one exchange)", "tab:red"),
        ):
            ys = [data["sizes"][s].get(name, {}).get("median") for s in sizes]
            if all(y is not None for y in ys):
                right.plot(xs, ys, style, marker="o", color=color, label=f"{label} [{backend}]")
    for ax, title in ((left, f"Decorate read path ({BUDGET:,}-token window)"), (right, "Write one exchange")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("messages in the memory")
        ax.set_ylabel("median ms (log)")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def misses(results: dict[str, dict]) -> list[str]:
    """Every missed target of this run, by backend (the verdicts of the tables above)."""
    lines = ["## Targets missed in this run", ""]
    found = False
    for backend, data in results.items():
        _, decorate = decorate_table(data)
        _, http = http_table(data)
        _, report = report_table(data)
        for v in decorate:
            for key, label in (("ratio", "wall"), ("ratio_cpu", "CPU")):
                if v.get(key) is not None and v[key] > TARGET_DECORATE:
                    found = True
                    lines.append(
                        f"* {backend}: decorate at {v['size']:,} messages is {v[key]:.2f}× the lower bound "
                        f"({label}; target {TARGET_DECORATE}×)."
                    )
        for key, label in (("median", "wall"), ("cpu", "CPU")):
            flat = flatness(data, "decorate", key)
            if flat is not None and flat > TARGET_FLAT:
                found = True
                lines.append(
                    f"* {backend}: decorate at 100,000 is {flat:.2f}× decorate at 1,000 ({label}; target "
                    f"{TARGET_FLAT}×)."
                )
        for v in http:
            if v["ratio"] > TARGET_HTTP:
                found = True
                lines.append(
                    f"* {backend}: over HTTP at {v['size']:,} messages decorate's extra cost is "
                    f"{v['ratio']:.2f}× a trivial round trip (target {TARGET_HTTP}×)."
                )
        for v in report:
            for key, label in (("ratio", "wall"), ("ratio_cpu", "CPU")):
                if v.get(key) is not None and v[key] > TARGET_REPORT:
                    found = True
                    lines.append(
                        f"* {backend}: report accept at {v['size']:,} messages is {v[key]:.2f}× the lower "
                        f"bound's write + commit ({label}; target {TARGET_REPORT}×)."
                    )
        for v in decorate:
            if not v["same"]:
                found = True
                lines.append(f"* {backend}: the windows differ at {v['size']:,} messages.")
    if not found:
        lines.append("None.")
    return lines


# What each section measures and the command that rewrites it.
CONTENTS = [
    "## What is on this page, and how to regenerate it",
    "",
    "Each section is rewritten by the command beside it; the charts are written by the same runs. Each",
    "table says what it measures against what floor (a lower bound doing the same work with the plain",
    "driver, a direct call, or a bare ASGI app). The machine is the one described above unless a section",
    "names its own. How the figures were reached (what was tried, kept and dropped) is in",
    "`docs/tuning/`: [recall](tuning/recall.md), [the fact extractor](tuning/extractor.md),",
    "[decorate's context block](tuning/decorate.md), [serving and the hot path](tuning/serving.md),",
    "[the proxy](tuning/proxy.md), [redaction](tuning/redaction.md).",
    "",
    "| section | measures | floor | command | chart |",
    "|---|---|---|---|---|",
    "| 1. Decorate read path | decorate in process and over HTTP, 100 to 100,000 messages | raw-SQL lower "
    "bound; LangGraph peer | `make bench` | [benchmarks.png](benchmarks.png) |",
    "| 2. Report accept | report's durable write, 100 to 100,000 messages | the contract's write with the "
    "plain driver | `make bench` | [benchmarks.png](benchmarks.png) |",
    "| 3. Python SDK | the SDK's own work per call; time to fall back | bare httpx | `make bench` | — |",
    "| 4. Pipeline | a turn's overhead with the offline `demo` model | the model's own time | `make bench` | "
    "— |",
    "| 5. Redaction | CPU per KB on adversarial input | linear time (a flat row) | `make bench` or `python "
    "-m bench.redaction_bench` | — |",
    "| 6. Proxy | latency the provider-compatible proxy adds | the direct call to the same stub | `make "
    "bench` or `python -m bench.proxy_bench` | — |",
    "| 7. Recall quality | LoCoMo and own-corpus recall, per embedding provider; LoCoMo in one thread and "
    "across threads | plain BM25; dense only; the one-thread form | `make bench-recall` | "
    "[benchmarks-recall.png](benchmarks-recall.png) |",
    "| Semantic recall's cost | decorate with `local` against `off` | `off` + one query embedding | `make "
    "bench` or `python -m bench.recall_cost` | — |",
    "| Offline fact extractor | precision and recall on every fact-line set | — | `python "
    "extractor/bench/eval.py PATH` | — |",
    "| 8. Under load | turns/s and p99 at 1 / 16 / 64 clients | bare ASGI app doing the lower bound's SQL | "
    "`make bench-load` | [benchmarks-load.png](benchmarks-load.png) |",
    "| 9. Metrics | Prometheus metrics' cost on the hot routes | the same server with metrics off | `make "
    "bench` or `python -m bench.metrics_cost` | — |",
    "| 10. Threads | decorate and report in one of 1,000 threads (100,000 messages); the history import's "
    "messages/s, accepted and processed | a one-thread memory of the same size and window | `make bench` or "
    "`python -m bench.threads_cost` | — |",
    "| 11. Webhooks | report and its background job with three endpoints subscribed to every event | the "
    "same with no endpoint | `make bench` or `python -m bench.webhooks_cost` | — |",
    "| Reliability | faults under load | — | `make reliability` | [reliability.md](reliability.md) |",
]

# The sections other commands write, between these markers: `make bench` keeps them as they are.
KEPT = (
    ("<!-- recall-bench:start -->", "<!-- recall-bench:end -->"),
    ("<!-- extractor:start -->", "<!-- extractor:end -->"),
    (LOAD_BEGIN, LOAD_END),
)
# Where each section goes on the page, by the start of its text.
ORDER = (
    "## 3.",
    "## 4.",
    "## 5.",
    "## 6.",
    KEPT[0][0],
    "## Semantic recall's cost",
    KEPT[1][0],
    KEPT[2][0],
    "## 9.",
    "## 10.",
    "## 11.",
)


def write_doc(results: dict[str, dict], info: dict, extras: list[str]) -> str:
    lines = [
        "# Benchmarks",
        "",
        "Generated by `make bench` (`python -m bench.run`); rerun it to refresh this page. Every figure",
        "is a median / p95 in milliseconds over repeated runs after a warm-up, and every ratio compares",
        "systems measured side by side in the same run (rounds interleave the systems, so machine noise",
        "hits them alike). Absolute times drift on a shared machine; the ratios are the claim.",
        "In-process cells read `median / p95 (median CPU)`: the CPU time of the measuring thread, which",
        "leaves out the wait for a core when other jobs share the machine. Ratios are given as",
        "`wall× / CPU×`, each with its own verdict against the target.",
        "",
        f"* Date: {info['date']}",
        f"* Machine: {info['cpu']}, {info['cores']} cores, {info['memory']} RAM, load average {info['load']} "
        "at the start (the machine is shared with other jobs)",
        f"* {info['os']}; Python {info['python']}; SQLite {info['sqlite']}; PostgreSQL {info['postgresql']}; "
        f"Redis {info['redis']}",
        "* Packages: " + ", ".join(f"{k} {v}" for k, v in info["packages"].items()),
        "",
        "![Decorate read path and write cost vs memory size](benchmarks.png)",
        "",
        *CONTENTS,
        "",
        "## The workload",
        "",
        "A memory of N messages (N = 100, 1,000, 10,000, 100,000) of ~200 characters each: user /",
        "assistant turns, every 10th assistant message a tool call followed by its tool result and the",
        f"reply. A decorate adds one new user message with a {BUDGET:,}-token budget, so the window is the",
        "newest ~1,100 messages at every size from 1,000 up. The token estimate is `threadless.window`'s",
        "everywhere.",
        "",
        "* **lower bound** — a plain table with an index on (memory, seq), read newest first with a running",
        "  token sum until the budget, cut at a user message, then `json.dumps`: plain Python and the",
        "  database driver, nothing else (stdlib `sqlite3` on the embedded run, `psycopg` on PostgreSQL).",
        "* **decorate (in process)** — the real service: `selectors.memory_get` + `services.memory_decorate`",
        "  (`store=False`) + `orjson.dumps` of the answer, i.e. the context builder with facts, recall and",
        "  failures blocks. **store=true** is the same on a copy of the memory, storing the new message",
        "  (a transaction, a row lock, an insert) each time.",
        "* **lower bound write** (section 2) — the memory row's counter `UPDATE … RETURNING`, the message",
        "  and the outbox row in one transaction, committed: what report must do by contract, nothing more.",
        "* **LangGraph peer** — the standard `MessagesState` graph with `SqliteSaver`; `get_state` of the",
        '  thread, then `trim_messages(strategy="last", start_on="human")` with the same token estimate.',
        "  Its write is `graph.invoke` adding one exchange (a stand-in model node, no model call).",
        "* **over HTTP** — a real uvicorn server (`harness/servers.py`), httpx with keep-alive on",
        "  loopback, rate limit off; the response body is read but not parsed.",
        '* All three systems must return the same window: checked on every size ("same window").',
        "",
    ]
    for backend, data in results.items():
        title = "Embedded default (SQLite, WAL)" if backend == "sqlite" else "PostgreSQL + Redis"
        lines += [f"## {title}", "", f"Lower bound: {data['lower_bound']}.", ""]
        lines += [
            "### 1. Decorate read path vs memory size",
            "",
            f"Target: in-process decorate within {TARGET_DECORATE}× the lower bound at every size, and flat "
            f"(100k within {TARGET_FLAT}× of 1k). Median / p95 ms.",
            "",
        ]
        table, _ = decorate_table(data)
        lines += table + [""]
        flat = flatness(data, "decorate")
        if flat is not None:
            flat_cpu = flatness(data, "decorate", "cpu")
            flat_store = flatness(data, "decorate_store")
            lines.append(
                f"Flatness: decorate at 100,000 / at 1,000 = **{flat:.2f}×** {mark(flat <= TARGET_FLAT)} "
                f"wall, **{flat_cpu:.2f}×** {mark(flat_cpu <= TARGET_FLAT)} CPU (store=true: "
                f"{flat_store:.2f}× wall)."
            )
            sizes = data["sizes"]
            if "10000" in sizes:
                same = sizes["100000"]["decorate"]["median"] / sizes["10000"]["decorate"]["median"]
                lb_growth = sizes["100000"]["lower_bound"]["median"] / sizes["1000"]["lower_bound"]["median"]
                lines.append(
                    f"At 1,000 messages the whole history is the window (1,000 messages, so no recall "
                    f"query); from 10,000 up the window is ~1,100 messages and recall looks outside it. "
                    f"The lower bound itself grows {lb_growth:.2f}× from 1,000 to 100,000; where the work "
                    f"is the same, 10,000 → 100,000, decorate grows **{same:.2f}×**."
                )
            lines.append("")
        lines += [
            "### Over HTTP",
            "",
            f"Target: decorate's cost above in process within {TARGET_HTTP}× of a trivial authenticated "
            "endpoint's round trip (`GET /v1/memories/{id}`).",
            "",
        ]
        table, _ = http_table(data)
        lines += table + [""]
        lines += [
            "### 2. Report accept vs memory size",
            "",
            f"Target: flat, within {TARGET_REPORT}× the lower bound's write of one message. The bound is "
            "what report must do by contract (SPEC 4.4) with the plain driver, in one transaction: "
            "`UPDATE … RETURNING` of the memory row's sequence and counters (the durable way to number "
            "the message and join the newest turn), the message's `INSERT`, the outbox row's `INSERT`, "
            "commit (no idempotency row: the bench sends no Idempotency-Key). `report accept` is "
            "`selectors.memory_get` + `services.report_accept` of one assistant message (the same "
            "statements on the real schema, then the broker publish, which runs after commit on the "
            "process's publisher thread).",
            "",
        ]
        table, _ = report_table(data)
        lines += table + [""]
        flat = flatness(data, "report")
        if flat is not None:
            lines.append(
                f"Flatness: report at 100,000 / at 1,000 = **{flat:.2f}×** wall, "
                f"**{flatness(data, 'report', 'cpu'):.2f}×** CPU."
            )
            lines.append("")
    lines += misses(results) + [""]
    for section in sorted(extras, key=_place):
        lines += [section.strip("\n"), ""]
    return "\n".join(lines).rstrip() + "\n"


def _place(section: str) -> int:
    return next((i for i, start in enumerate(ORDER) if section.startswith(start)), len(ORDER))


def kept_sections(old: str) -> list[str]:
    """The sections of `old` that other commands write (recall quality, the extractor, load)."""
    return [
        old[old.index(start) : old.index(end) + len(end)]
        for start, end in KEPT
        if start in old and end in old
    ]


def child_section(module: str, title: str, env: dict) -> str:
    """The section `python -m module` prints, or under `title` why it could not run."""
    done = subprocess.run(
        [sys.executable, "-m", module], cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600
    )
    if done.returncode == 0:
        return done.stdout.strip()
    return f"{title}\n\nThis section failed to run: `{done.stderr.strip()[-400:]}`"


def extra_sections() -> list[str]:
    """SDK, pipeline and proxy figures, against one real server on the embedded default."""
    sys.path.insert(0, str(ROOT))
    from harness.servers import ThreadlessServer

    sections: list[str] = []
    env = {k: v for k, v in os.environ.items()}
    for name in ("DATABASE_URL", "THREADLESS_SERVICES", "REDIS_URL", "CELERY_BROKER_URL"):
        os.environ.pop(name, None)
    # The proxy section's stub upstream listens on loopback, which the egress policy must allow.
    server = ThreadlessServer(
        env={"THREADLESS_RATE_LIMIT_PER_MINUTE": "0", "THREADLESS_EGRESS_ALLOW": "127.0.0.1"}
    )
    try:
        server.start()
        try:
            from bench import sdk_bench

            log("SDK figures")
            results = sdk_bench.run(live=(server.url, server.key))
            refused = results["fallback_refused"]["median_ms"]
            hanging = results["fallback_hanging"]["max_ms"]
            sections.append(
                "\n".join(
                    [
                        "## 3. Python SDK (embedded default)",
                        "",
                        "Targets: fallback on a refused connection ≤ 20 ms "
                        f"(measured {refused:.2f} ms median {mark(refused <= 20)}); on a hanging server with "
                        f"`timeout=1` ≤ 1.05 s (measured {hanging:.0f} ms worst {mark(hanging <= 1050)}); "
                        "the SDK's own work per decorate beyond the HTTP call ≤ 1 ms (SPEC 8; JSON decoding "
                        "of a large answer aside). From `bench/sdk_bench.py` (a stub server with a canned "
                        "61-message answer, and this run's live server).",
                        "",
                        sdk_bench.markdown(results),
                    ]
                )
            )
        except Exception as exc:  # noqa: BLE001 - one failing section must not lose the others
            log(f"SDK section failed: {exc!r}")
            sections.append(f"## 3. Python SDK\n\nThis section failed to run: `{exc!r}`.")
        try:
            from bench import pipeline_bench

            log("pipeline figures")
            sections.append(pipeline_bench.markdown(server.url, server.key))
        except Exception as exc:  # noqa: BLE001
            log(f"pipeline section failed: {exc!r}")
            sections.append(f"## 4. Pipeline\n\nThis section failed to run: `{exc!r}`.")
        try:
            from bench import proxy_bench
            from harness.proxy_stubs import ProviderStub

            log("proxy figures")
            stub = ProviderStub(chunked_streams=True)
            try:
                sections.append(
                    proxy_bench.markdown(server.url, server.key, stub, rounds=30, pid=server.web.pid)
                )
            finally:
                stub.close()
        except Exception as exc:  # noqa: BLE001
            log(f"proxy section failed: {exc!r}")
            sections.append(f"## 6. Provider-compatible proxy\n\nThis section failed to run: `{exc!r}`.")
        try:
            from bench import metrics_cost

            log("metrics cost on the hot routes")
            sections.append(metrics_cost.markdown())
        except Exception as exc:  # noqa: BLE001
            log(f"metrics section failed: {exc!r}")
            sections.append(f"## 9. Metrics on the hot routes\n\nThis section failed to run: `{exc!r}`.")
    finally:
        server.stop()
        os.environ.clear()
        os.environ.update(env)
    # Each of these runs in its own process on a throwaway SQLite database of its own.
    child_env = {k: v for k, v in env.items() if k not in ("DATABASE_URL", "THREADLESS_VAR_DIR")}
    # Semantic recall's cost: decorate with off and the default at three sizes, indexing throughput.
    log("semantic recall's cost")
    sections.append(child_section("bench.recall_cost", "## Semantic recall's cost", child_env))
    # Threads: decorate and report in one of 1,000 threads against a one-thread memory, and the
    # history import's throughput.
    log("threads and the history import")
    sections.append(child_section("bench.threads_cost", threads_cost.TITLE, child_env))
    # Webhooks: the report path with three endpoints against none, on the embedded broker.
    log("webhooks on the report path")
    embedded = {k: v for k, v in child_env.items() if k not in ("CELERY_BROKER_URL", "REDIS_URL")}
    sections.append(child_section("bench.webhooks_cost", webhooks_cost.TITLE, embedded))
    return sections


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    parser.add_argument("--backends", default=os.environ.get("BENCH_BACKENDS", "sqlite,postgres"))
    parser.add_argument("--budget", type=float, default=float(os.environ.get("BENCH_BUDGET", "12")))
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--no-extras", action="store_true", help="skip the SDK and pipeline sections")
    parser.add_argument(
        "--no-redaction", action="store_true", help="skip the redaction time vs input size table"
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="rewrite the doc from the last run's per-backend results (var/bench/*.json)",
    )
    parser.add_argument("--doc", default=str(DOCS / "benchmarks.md"))
    args = parser.parse_args()
    VAR.mkdir(parents=True, exist_ok=True)
    DOCS.mkdir(parents=True, exist_ok=True)
    info = machine()
    results: dict[str, dict] = {}
    for backend in [b for b in args.backends.split(",") if b]:
        if backend == "postgres":
            subprocess.run(["bash", "scripts/ensure_services.sh"], cwd=ROOT, capture_output=True, timeout=300)
        saved = VAR / f"{backend}.json"
        data = json.loads(saved.read_text()) if args.reuse and saved.exists() else run_backend(backend, args)
        if data is not None:
            results[backend] = data
    cached = VAR / "extras.json"
    if args.no_extras:
        extras = []
    elif args.reuse and cached.exists():
        extras = json.loads(cached.read_text())
    else:
        extras = extra_sections()
    if not args.no_redaction and not any(e.startswith(redaction_bench.TITLE) for e in extras):
        log("redaction time vs input size")
        extras.append(redaction_bench.markdown(redaction_bench.run()))
    if not args.no_extras:
        cached.write_text(json.dumps(extras))
    (VAR / "results.json").write_text(json.dumps({"machine": info, "results": results}, indent=1))
    if results:
        chart(results, DOCS / "benchmarks.png")
    doc = Path(args.doc)
    old = doc.read_text() if doc.exists() else ""
    text = write_doc(results, info, extras + kept_sections(old))
    doc.write_text(text)
    log(f"wrote {args.doc}")


if __name__ == "__main__":
    main()
