"""The load bench's report: section 8 of docs/benchmarks.md ("Under load"), between BEGIN and END,
written from a run's results (the dict `python -m bench.load` saves as VAR/results.json): the
phases' table, memories beyond the budget, the interleaved share of the floor, the probes, HTTP
against in process, before → after, the web servers' comparison and a chart. Targets are marked
✅ / ❌ here; nothing here measures."""

from __future__ import annotations

from pathlib import Path

from bench.load.config import BEYOND_BUDGET, BEYOND_CLIENTS, HISTORY
from bench.load.stacks import FLOOR_OF
from bench.load.statistics import cpu_share

BEGIN, END = "<!-- load:begin -->", "<!-- load:end -->"

TARGET_SHARE = 0.60  # turn throughput at 16 clients ≥ 60 % of the floor's
TARGET_TAIL = 3.0  # p99 at 64 clients ≤ 3× p50
TARGET_HTTP_MS = 2.0  # single-client decorate over HTTP ≤ in-process + 2 ms
TARGET_BEYOND_SHARE = 0.60  # beyond the budget: embeddings local's turns/s ≥ 60 % of off's (p99 ≤ 3× p50)


def mark(ok: bool) -> str:
    return "✅" if ok else "❌"


def table(results: dict) -> list[str]:
    lines = [
        "| stack | clients | turns/s | turn p50 / p99 (ms) | p99 ÷ p50 | server CPU per turn | PostgreSQL "
        "CPU per turn | Redis CPU per turn | load generator CPU per turn | errors | share of floor (this "
        "phase) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, res in results["stacks"].items():
        floor = results["stacks"].get(FLOOR_OF.get(name, ""), None)
        for row in res["turns"]:
            share = "—"
            if floor:
                base = next((r for r in floor["turns"] if r["clients"] == row["clients"]), None)
                if base and base["turns_s"]:
                    value = row["turns_s"] / base["turns_s"]
                    share = f"{value:.0%}"  # the target's share is the interleaved one (interleaved_table)
            tail = row["p99"] / row["p50"] if row["p50"] else float("nan")
            tail_text = f"{tail:.1f}×" + (f" {mark(tail <= TARGET_TAIL)}" if row["clients"] == 64 else "")
            cpu, pg, redis, gen = (
                f"{row[key]:.2f} ms" if key in row else "—"
                for key in ("cpu_ms", "pg_cpu_ms", "redis_cpu_ms", "gen_cpu_ms")
            )
            lines.append(
                f"| {res['label']} | {row['clients']} | {row['turns_s']:.0f} | {row['p50']:.1f} / "
                f"{row['p99']:.1f} | {tail_text} | {cpu} | {pg} | {redis} | {gen} | {row['errors']} | "
                f"{share} |"
            )
    return lines


def beyond_table(results: dict) -> list[str]:
    """The memories-beyond-the-budget rows of each product stack, beside its floor's 16 clients."""
    rows = [(name, res) for name, res in results["stacks"].items() if "beyond" in res]
    if not rows:
        return []
    lines = [
        "",
        f"**Memories beyond the budget** (decorate at {BEYOND_BUDGET} tokens, so recall runs every turn; "
        f"{BEYOND_CLIENTS} clients on memories of {HISTORY} messages; embeddings `local`, the default, and "
        "`off` on two projects of the same server, in ABBA blocks of half a phase). Targets: `local`'s "
        f"turns/s ≥ {TARGET_BEYOND_SHARE:.0%} of `off`'s; its p99 ≤ {TARGET_TAIL:g}× its p50.",
        "",
        "| stack | embeddings | turns/s | ÷ off | turn p50 / p99 (ms) | p99 ÷ p50 | server CPU per turn | "
        "floor, 16 clients: turns/s | errors |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, res in rows:
        beyond = res["beyond"]
        floor = results["stacks"].get(FLOOR_OF.get(name, ""))
        base = next((r for r in floor["turns"] if r["clients"] == 16), None) if floor else None
        floor_text = f"{base['turns_s']:.0f}" if base else "—"
        for side in ("local", "off"):
            row = beyond[side]
            share = row["turns_s"] / beyond["off"]["turns_s"] if beyond["off"]["turns_s"] else float("nan")
            tail = row["p99"] / row["p50"] if row["p50"] else float("nan")
            share_text = f"{share:.2f} {mark(share >= TARGET_BEYOND_SHARE)}" if side == "local" else "1"
            tail_text = f"{tail:.1f}×" + (f" {mark(tail <= TARGET_TAIL)}" if side == "local" else "")
            lines.append(
                f"| {res['label']} | {side} | {row['turns_s']:.0f} | {share_text} | {row['p50']:.1f} / "
                f"{row['p99']:.1f} | {tail_text} | {row['cpu_ms']:.2f} ms | {floor_text} | {row['errors']} |"
            )
    return lines


def _both(floor: dict, product: dict, key: str, fmt: str) -> str:
    """ "floor → product" of one per-block figure's medians (— where it was not measured)."""
    if key not in floor or key not in product:
        return "—"
    return f"{format(floor[key]['median'], fmt)} → {format(product[key]['median'], fmt)}"


def interleaved_table(results: dict) -> list[str]:
    """The share of the floor at 16 clients from the interleaved blocks (the target's figure)."""
    runs = results.get("interleaved") or {}
    if not runs:
        return []
    lines = [
        "| stack (against its floor) | blocks | share of the floor: median of the pair ratios (range) | "
        "pooled ratio | by CPU per turn (range) | turns/s, floor → product (median block) | server CPU per "
        "turn | PostgreSQL CPU per turn | load generator CPU per turn | load generator's share of the "
        "machine | machine busy | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in runs.values():
        share, floor, product = run["share"], run["floor_side"], run["product_side"]
        if not share["pairs"]:
            continue
        by_cpu = cpu_share(run["blocks"])
        cpu_text = (
            f"{by_cpu['median']:.0%} ({by_cpu['min']:.0%}–{by_cpu['max']:.0%})" if by_cpu["pairs"] else "—"
        )
        lines.append(
            f"| {run['label']} ({run['clients']} clients) | {share['pairs']} pairs × {run['block']:g} s | "
            f"**{share['median']:.0%}** ({share['min']:.0%}–{share['max']:.0%}) "
            f"{mark(share['median'] >= TARGET_SHARE)} | {share['pooled']:.0%} | {cpu_text} | "
            f"{_both(floor, product, 'turns_s', '.0f')} | {_both(floor, product, 'cpu_ms', '.2f')} ms | "
            + (f"{_both(floor, product, 'pg_cpu_ms', '.2f')} ms" if "pg_cpu_ms" in floor else "—")
            + f" | {_both(floor, product, 'gen_cpu_ms', '.2f')} ms | "
            f"{_both(floor, product, 'gen_share', '.0%')} | {_both(floor, product, 'busy_share', '.0%')} | "
            f"{floor['errors'] + product['errors']} |"
        )
    return lines


def probes(results: dict) -> list[str]:
    lines = [
        "| stack | `/healthz` (16 clients) | GET memory (16 clients) | `/healthz` p50, 1 client | "
        "GET memory p50, 1 client |",
        "|---|---:|---:|---:|---:|",
    ]
    for res in results["stacks"].values():
        lines.append(
            f"| {res['label']} | {res['healthz']['rps']:.0f}/s | {res['get']['rps']:.0f}/s | "
            f"{res['healthz_1']['p50']:.2f} ms | {res['get_1']['p50']:.2f} ms |"
        )
    return lines


def service_cpu(inproc: dict) -> str:
    cpu = inproc.get("cpu_ms")
    if not cpu:
        return "—"
    return f"{cpu['decorate'] + cpu['report']:.2f} ms ({cpu['decorate']:.2f} + {cpu['report']:.2f})"


def http_vs_inproc(results: dict) -> list[str]:
    lines = [
        "| stack | decorate over HTTP, 1 client (p50) | in process (p50) | difference | "
        "writes: decorate / report (beyond stored rows) | SQL statements: decorate / report | "
        "CPU of the service calls alone per turn |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for res in results["stacks"].values():
        inproc = res.get("inproc")
        if not inproc:
            continue
        http = res.get("decorate_1", float("nan"))
        diff = http - inproc["decorate_p50"]
        lines.append(
            f"| {res['label']} | {http:.2f} ms | {inproc['decorate_p50']:.2f} ms | "
            f"+{diff:.2f} ms {mark(diff <= TARGET_HTTP_MS)} | {inproc['writes']['decorate']} / "
            f"{inproc['writes']['report']} ({inproc['writes']['decorate_extra']} / "
            f"{inproc['writes']['report_extra']}) | {inproc['writes']['decorate_statements']} / "
            f"{inproc['writes']['report_statements']} | {service_cpu(inproc)} |"
        )
    return lines


def before_after(results: dict) -> list[str]:
    stacks = results["stacks"]
    if "before" not in stacks or "embedded" not in stacks:
        return []
    lines = [
        "",
        "Before → after, embedded default, same run (turns/s; turn p50 / p99 ms):",
        "",
        "| clients | before | after | speed-up |",
        "|---:|---:|---:|---:|",
    ]
    for old, new in zip(stacks["before"]["turns"], stacks["embedded"]["turns"], strict=False):
        lines.append(
            f"| {old['clients']} | {old['turns_s']:.0f} ({old['p50']:.0f} / {old['p99']:.0f}) | "
            f"{new['turns_s']:.0f} ({new['p50']:.0f} / {new['p99']:.0f}) | "
            f"{new['turns_s'] / old['turns_s']:.2f}× |"
        )
    return lines


def chart(results: dict, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    if not results["stacks"]:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for name, res in results["stacks"].items():
        xs = [r["clients"] for r in res["turns"]]
        style = "--" if name.startswith("floor") else "-"
        left.plot(xs, [r["turns_s"] for r in res["turns"]], style, marker="o", label=res["label"])
        right.plot(xs, [r["p99"] for r in res["turns"]], style, marker="o", label=res["label"])
    left.set(xscale="log", xlabel="clients", ylabel="turns / s", title="Throughput (decorate + report)")
    right.set(xscale="log", yscale="log", xlabel="clients", ylabel="turn p99 (ms)", title="Tail latency")
    for ax in (left, right):
        ax.set_xticks([r["clients"] for r in next(iter(results["stacks"].values()))["turns"]])
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.grid(alpha=0.3)
    left.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def where_the_rest_goes(results: dict) -> str:
    """The CPU budget of a turn at 16 clients, from this run's numbers: what the share can reach."""
    parts = []
    for name, res in results["stacks"].items():
        floor = results["stacks"].get(FLOOR_OF.get(name, ""))
        cpu = (res.get("inproc") or {}).get("cpu_ms")
        row = next((r for r in res["turns"] if r["clients"] == 16), None)
        base = next((r for r in floor["turns"] if r["clients"] == 16), None) if floor else None
        if not (cpu and row and base and "cpu_ms" in row and "cpu_ms" in base):
            continue
        service = cpu["decorate"] + cpu["report"]
        parts.append(
            f"{res['label']}: {row['cpu_ms']:.1f} ms of server CPU per turn against the floor's "
            f"{base['cpu_ms']:.1f} ms; the two service calls alone (`memory_decorate` + `report_accept` in "
            f"process) take {service:.1f} ms, so even a serving layer that cost nothing would reach about "
            f"{base['cpu_ms'] / service:.0%} of the floor, and the serving layer (HTTP, Django, DRF, auth, "
            f"limits, the memory lookup, the thread hand-off) costs the other "
            f"{max(0.0, row['cpu_ms'] - service):.1f} ms"
        )
    if not parts:
        return ""
    return (
        "Where the rest goes: at 16 clients every stack is CPU-bound on this 2-core machine (the load "
        "generator and other work share it), so turns/s follows CPU per turn. " + "; ".join(parts) + ". "
        "Where the serving layer costs more than the service calls, it is the larger half of what the 60 % "
        "target needs: spread over the server's HTTP parsing, the thread hand-off, Django's request cycle "
        "and DRF's dispatch, the counter round trips and the memory lookup, with no single part left above "
        "~5 % of the server's samples (py-spy: docs/tuning/serving.md). The service calls' CPU includes "
        "handing report's outbox row to the broker (on the process's publisher thread). More threads do "
        "not help SQLite (one writer: "
        "the tail grows, throughput does not), so the embedded default runs 2 per process."
    )


def interleaved(results: dict) -> list[str]:
    """The interleaved blocks' paragraph and table (nothing if the run had none)."""
    rows = interleaved_table(results)
    if not rows:
        return []
    run = next(iter(results["interleaved"].values()))
    text = (
        f"**The share of the floor at {run['clients']} clients** (the target's figure) comes from "
        "interleaved blocks: the floor's and the product's servers both up, as above, then "
        f"{run['share']['pairs']} pairs of {run['block']:g} s blocks of {run['clients']} clients doing turns "
        "against one and then the other, in ABBA order (floor, product, product, floor, floor, …), after a "
        f"{run.get('warm', 2):g} s warm-up on each that is not counted; every block on fresh memories of "
        f"{HISTORY} messages, as a phase above starts on. Each pair's ratio is the product's turns/s ÷ the "
        "floor's; the share is the median of the pair ratios, with their range, and the pooled ratio (all "
        "the product's turns per second ÷ the floor's). Two adjacent blocks see nearly the same machine, so "
        "the other work on it, which moved the floor's own turns/s by 2× from one run to the next, cancels "
        "in each ratio; the phases above are a minute or more apart, so their *share of floor (this phase)* "
        "column is kept only for the other client counts. Per block: the CPU per turn of the server's "
        "processes, of the PostgreSQL processes working for its database, and of the load generator (this "
        "process, the raw asyncio client), each figure the median over the side's blocks; *machine busy* is "
        "the whole machine's CPU in use over a block (/proc/stat), everyone's work included. *By CPU per "
        "turn* is the same pairs' floor's server + PostgreSQL CPU per turn ÷ the product's: what the share "
        "would be on a machine given wholly to the two (Redis, shared with other users, and the load "
        "generator left out); it moves far less with the machine's other work than turns/s does, and is a "
        "cross-check, not the target's figure."
    )
    return [text, ""] + rows + [""]


def servers_table(result: dict) -> list[str]:
    """The servers' comparison as a Markdown table (median block, range in brackets)."""
    clients = result["clients"]
    head = "| server | " + " | ".join(
        f"{n} clients: turns/s | p99 ms | ÷ first (turns/s, p99)" for n in clients
    )
    lines = [head + " | server CPU per turn |", "|---|" + "---:|---:|---:|" * len(clients) + "---:|"]
    for server, rows in result["summary"].items():
        cells = []
        for n in clients:
            row = rows.get(str(n))
            if not row:
                cells += ["—"] * 3
                continue
            t, p = row["turns_s"], row["p99"]
            vs = row.get("vs_reference") or {}
            ratio = f"{vs['turns_s']['median']:.2f} / {vs['p99']['median']:.2f}" if vs else "—"
            cells += [
                f"{t['median']:.0f} ({t['min']:.0f}–{t['max']:.0f})",
                f"{p['median']:.0f} ({p['min']:.0f}–{p['max']:.0f})",
                ratio,
            ]
        cpu = " / ".join(f"{rows[str(n)]['cpu_ms']['median']:.2f}" for n in clients if str(n) in rows)
        lines.append(f"| {result['labels'][server]} | " + " | ".join(cells) + f" | {cpu} ms |")
    return lines


def servers_section(results: dict) -> list[str]:
    """The web servers' comparison (nothing if the run had none)."""
    result = results.get("servers")
    if not result:
        return []
    threads = ", ".join(f"{name} {n}" for name, n in result["threads"].items())
    text = (
        f"**Web servers, same app** ({result['backend']}): every server up at once with {result['workers']} "
        f"processes (threads per process: {threads}), then {result['rounds']} rounds of one "
        f"{result['block']:g} s block per server and client count, the servers' order rotating each round, "
        f"each block on fresh memories of {HISTORY} messages, after a {result['warm']:g} s warm-up per "
        "server that is not counted. Each cell: the median block, with the range over the rounds; *÷ first* "
        "is the median over the rounds of each block's turns/s and p99 divided by the first server's block "
        "of the same round. The floor is the bare app of its backend under the floor's server. The machine "
        "is shared: *machine busy* moved between blocks, so the paired ratios are the figures to read."
    )
    return ["", text, ""] + servers_table(result)


def section(results: dict, charted: bool) -> str:
    info = results["machine"]
    head = [
        BEGIN,
        "## 8. Under load (`make bench-load`)",
        "",
        f"Generated by `make bench-load` on {info['date']}: {info['cpu']}, {info['cores']} cores, load "
        f"{info['load']} at the start, shared with other work. {results['workers']} server worker processes "
        "for every stack (granian, ASGI, uvloop, as `make serve`), threads per process: "
        + ", ".join(f"{n} {r.get('threads', results['threads'])}" for n, r in results["stacks"].items())
        + f"; {results['phase']:.0f} s per "
        f"phase. Each client is one keep-alive connection on its own memory of {HISTORY} messages; a turn = "
        "decorate one user message + report the reply. Rate limit on (counted, never reached); no Celery "
        "worker running (report's background work waits on the broker), so these are the web tier's numbers. "
        "The floor is a bare ASGI app (`bench/floor.py`) doing the decorate lower bound's SQL with the plain "
        "driver, in the same process model. Targets: turns/s at 16 clients ≥ 60 % of the floor's (the "
        "interleaved blocks' share, below); p99 at 64 clients ≤ 3× p50; single-client decorate over HTTP ≤ "
        "in-process + 2 ms.",
        "",
        "What the serving path does (details in [deployment.md](deployment.md)): no request writes "
        "a row the whole project shares (rate limits and usage in Redis, or the embedded default's own "
        "counter file, flushed to `ApiCall` / `ProjectUsage` by a beat task); decorate updates the memory "
        "row once; `make serve` runs one process per CPU, each with a thread pool for sync views; database "
        "connections are persistent on SQLite too (PostgreSQL: health-checked); each process keeps the key "
        "rows it looked up (revocation still holds from the next request on every process: a key generation "
        "in the counter store, read per request, on the API in the same round trip as the rate and plan "
        "counts); no access log unless asked; sync views reach their thread through `serving.syncviews`, "
        "one hand-off each way instead of a2wsgi's four waits. "
        + (
            "The `before` row is the code before this work (BENCH_BEFORE_REF), extracted with `git archive` "
            "and served the same way (same server, processes and threads). "
            if "before" in results["stacks"]
            else ""
        )
        + "*Server CPU per turn* is the CPU time of the "
        "server's processes (from /proc) over the turns they served: unlike turns/s it hardly moves with "
        "what else the machine runs. *PostgreSQL CPU per turn* is the same for the PostgreSQL processes "
        "working for the bench's database (its backends, plus the server's shared checkpointer / WAL writer "
        "/ background writer); *Redis CPU per turn* for redis-server (shared with whatever else uses it: the "
        "floor's row, which uses no Redis, shows that background); — on SQLite (in process). The HTTP vs "
        "in-process row times both halves the same way: 50 decorates (after 10 warm-ups), each followed by "
        "its report, on a fresh memory of 200 messages.",
        "",
    ]
    body = table(results) + beyond_table(results) + [""] + interleaved(results) + probes(results)
    body += [""] + http_vs_inproc(results)
    body += before_after(results)
    body += servers_section(results)
    if charted:
        body += ["", "![Throughput and p99 vs clients](benchmarks-load.png)"]
    body += ["", where_the_rest_goes(results)]
    return "\n".join(head + body + ["", END]) + "\n"


def write_doc(text: str, doc: Path) -> None:
    old = doc.read_text() if doc.exists() else ""
    if BEGIN in old and END in old:
        new = old[: old.index(BEGIN)] + text.rstrip("\n") + old[old.index(END) + len(END) :]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    doc.write_text(new)
