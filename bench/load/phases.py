"""The load bench's phases, each on stacks it starts and stops itself: a stack's sequential phases
(turns at each client count, the probes, memories beyond the budget), the in-process run after
it, the interleaved blocks of a product against its floor, and the web servers' comparison. Each
returns the dict the report reads."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from bench.common import ROOT
from bench.load.client import decorate_probe, make_memories, requests, run, turns
from bench.load.config import BEYOND_BUDGET, BEYOND_CLIENTS, log
from bench.load.cpu import tree_cpu
from bench.load.stacks import Stack, flush_redis, server_stack
from bench.load.statistics import pair_summary, schedule, servers_summary, side_summary


def run_stack(stack: Stack, clients: list[int], phase: float) -> dict:
    log(f"{stack.name}: starting {stack.workers} worker(s) × {stack.threads} threads")
    stack.start()
    try:
        # Two more memories than clients, untouched by the turns: the HTTP probe's and the
        # in-process run's, so both time decorate on a memory of the same size.
        *memories, probe_http, probe_inproc = run(make_memories(stack, max(clients) + 2))
        run(turns(stack, memories, min(4, max(clients)), 1.5))  # warm every worker
        out = {"label": stack.label, "threads": stack.threads, "turns": []}
        for n in clients:
            result = run(turns(stack, memories, n, phase))
            log(
                f"{stack.name}: {n:>2} clients {result['turns_s']:.0f} turns/s p50 {result['p50']:.1f} "
                f"p99 {result['p99']:.1f} cpu/turn {result['cpu_ms']:.2f} ms errors {result['errors']}"
            )
            out["turns"].append(result)
        probe = 16 if 16 in clients else max(clients)
        out["healthz"] = run(requests(stack, lambda m: "/healthz", probe, phase / 2, memories))
        out["get"] = run(requests(stack, stack.get_path, probe, phase / 2, memories))
        out["healthz_1"] = run(requests(stack, lambda m: "/healthz", 1, phase / 3, memories))
        out["get_1"] = run(requests(stack, stack.get_path, 1, phase / 3, memories))
        out["decorate_1"] = run(decorate_probe(stack, probe_http))
        log(f"{stack.name}: decorate over HTTP, 1 client, fresh memory: p50 {out['decorate_1']:.2f} ms")
        out["memory"] = probe_inproc
        if stack.product:
            out["beyond"] = beyond_budget(stack, memories[:BEYOND_CLIENTS], phase)
        return out
    finally:
        stack.stop()


def settle(stack: Stack, memories: list[str], key: str, *, rounds: int = 20) -> None:
    """Warm-up turns in 1.5 s rounds until two rounds in a row serve within 15 % of each other's turns/s
    and no turn waited a second (the model loading in each server process: its decorates wait up to
    the query's cap, then run lexical), at most `rounds` rounds; not counted."""
    previous = None
    for _ in range(rounds):
        done = run(turns(stack, memories, len(memories), 1.5, BEYOND_BUDGET, key))
        rate = done["turns"] / done["seconds"]
        if previous is not None and done["p99"] < 1000 and abs(rate - previous) <= 0.15 * previous:
            return
        previous = rate
    log(f"{stack.name}: beyond the budget, the warm-up did not settle in {rounds} rounds")


def beyond_budget(stack: Stack, memories: list[str], phase: float) -> dict:
    """Memories beyond the budget: BEYOND_CLIENTS clients decorating at BEYOND_BUDGET tokens, so
    recall runs on every turn, on the run's memories (embeddings local, the default) and on as many
    of the project with embeddings off, in ABBA blocks of half a phase each after a warm-up of each
    (the model's load), so both sides see the same machine. Per side: turns/s over its blocks, the
    blocks' mean p50 / p99 and server CPU per turn."""
    off = run(make_memories(stack, len(memories), prefix="off", key=stack.key_off))
    sides = {"local": (memories, ""), "off": (off, stack.key_off)}
    for mems, key in sides.values():
        settle(stack, mems, key)
    blocks: dict[str, list[dict]] = {"local": [], "off": []}
    for side in ("local", "off", "off", "local"):
        mems, key = sides[side]
        blocks[side].append(run(turns(stack, mems, len(mems), phase / 2, BEYOND_BUDGET, key)))
    out = {"budget": BEYOND_BUDGET, "clients": len(memories)}
    for side, runs in blocks.items():
        count = sum(r["turns"] for r in runs)
        out[side] = {
            "turns_s": count / sum(r["seconds"] for r in runs),
            "p50": statistics.mean(r["p50"] for r in runs),
            "p99": statistics.mean(r["p99"] for r in runs),
            "cpu_ms": sum(r["cpu_ms"] * r["turns"] for r in runs) / max(1, count),
            "errors": sum(r["errors"] for r in runs),
            "busy_share": statistics.mean(r["busy_share"] for r in runs),
        }
        row = out[side]
        log(
            f"{stack.name}: beyond the budget, embeddings {side}: {row['turns_s']:.0f} turns/s "
            f"p50 {row['p50']:.1f} p99 {row['p99']:.1f} cpu/turn {row['cpu_ms']:.2f} ms "
            f"errors {row['errors']}"
        )
    return out


def run_interleaved(
    product: Stack, floor: Stack, clients: int, pairs: int, block: float, warm: float
) -> dict:
    """Both servers up at once, then `pairs` pairs of `block`-second blocks of `clients` clients doing
    turns, against one and then the other in ABBA order (`schedule`), after a `warm`-second warm-up
    on each that is not counted. Every block runs on its own fresh memories of HISTORY messages (made
    before the first block), as a sequential phase starts on them: a memory grows by two messages a
    turn and decorate's window with it, so reused memories would make later blocks dearer."""
    log(
        f"interleaved: {product.name} against {floor.name}, {pairs} pairs of {block:g} s blocks, {clients} "
        "clients"
    )
    sides = {"floor": floor, "product": product}
    up: list[Stack] = []
    try:
        for stack in (floor, product):
            stack.start()
            up.append(stack)
        sets = {
            side: run(make_memories(stack, clients * (pairs + 1), prefix="i", parallel=4))
            for side, stack in sides.items()
        }
        log(f"interleaved: {clients * (pairs + 1)} fresh memories on each side")
        for side, stack in sides.items():  # warm-up: every worker and connection path, not counted
            run(turns(stack, sets[side][:clients], clients, warm))
        used = {"floor": 1, "product": 1}
        blocks = []
        for pair, side in schedule(pairs):
            k = used[side]
            used[side] += 1
            other = sides["product" if side == "floor" else "floor"]
            idle = tree_cpu(other.proc.pid)
            result = run(turns(sides[side], sets[side][k * clients : (k + 1) * clients], clients, block))
            # The other server, idle meanwhile: its CPU over the block is a cost on this side's machine.
            result.update(pair=pair, side=side, idle_cpu_s=tree_cpu(other.proc.pid) - idle)
            blocks.append(result)
            log(
                f"  pair {pair} {side:>7}: {result['turns_s']:.0f} turns/s, server {result['cpu_ms']:.2f} ms "
                f"+ PostgreSQL {result.get('pg_cpu_ms', 0):.2f} ms + load generator "
                f"{result['gen_cpu_ms']:.2f} ms per turn; machine busy {result['busy_share']:.0%}; the idle "
                f"server {result['idle_cpu_s'] * 1000:.0f} ms of CPU; errors {result['errors']}"
            )
    finally:
        for stack in reversed(up):
            stack.stop()
    share = pair_summary(blocks)
    if share["pairs"]:
        log(
            f"interleaved: {product.name} ÷ {floor.name}: median {share['median']:.0%} "
            f"({share['min']:.0%}–{share['max']:.0%}), pooled {share['pooled']:.0%}"
        )
    return {
        "label": product.label,
        "floor": floor.name,
        "floor_label": floor.label,
        "clients": clients,
        "block": block,
        "warm": warm,
        "blocks": blocks,
        "share": share,
        "floor_side": side_summary(blocks, "floor"),
        "product_side": side_summary(blocks, "product"),
    }


def in_process(stack: Stack, memory: str) -> dict:
    """decorate in process on the stack's own database, and the write counts, in a child."""
    done = subprocess.run(
        [sys.executable, "-m", "bench.load.inproc", memory],
        cwd=ROOT,
        env=stack.env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        log(f"{stack.name}: in-process run failed:\n{done.stderr[-2000:]}")
        return {}
    return json.loads(done.stdout)


def run_servers(
    backend: str,
    servers: list[str],
    floor_server: str,
    clients: list[int],
    rounds: int,
    block: float,
    warm: float,
    workers: int,
    threads: int,
) -> dict:
    """The same app (`backend`) under each of `servers`, and the floor of that backend under `floor_server`,
    all up at once with the same number of processes; then `rounds` rounds, each one block of `block`
    seconds per server and client count, the servers' order rotating from round to round (A B C, B C A,
    …), so that the machine's other work falls on every server alike. Every block runs on fresh memories.
    Per server and client count: the median block (turns/s, p99) and its range, and each round's ratio
    to the first server's block of the same round (its median over the rounds)."""
    floor_name = {"embedded": "floor-sqlite", "postgres": "floor-pg"}[backend]
    stacks = {server: server_stack(backend, server, workers, threads) for server in servers}
    stacks["floor"] = server_stack(floor_name, floor_server, workers, threads)
    log(
        f"servers: {', '.join(stacks)} on {backend}, {workers} processes each, {rounds} rounds of {block:g} "
        f"s blocks at {clients} clients"
    )
    if backend == "postgres":
        flush_redis()
    up: list[Stack] = []
    blocks: list[dict] = []
    try:
        with ThreadPoolExecutor(len(stacks)) as pool:  # migrations and Django's start-up, side by side
            futures = {pool.submit(stack.start): stack for stack in stacks.values()}
            failed = []
            for future, stack in futures.items():
                try:
                    future.result()
                    up.append(stack)
                except Exception as exc:  # noqa: BLE001 - reported, and the run stops below
                    failed.append(f"{stack.slot}: {exc}")
            if failed:
                raise RuntimeError("; ".join(failed))
        per_set = sum(clients)
        sets = {
            name: run(make_memories(stack, per_set * (rounds + 1), prefix="s", parallel=4))
            for name, stack in stacks.items()
        }
        log(f"servers: {per_set * (rounds + 1)} fresh memories on each")
        for name, stack in stacks.items():  # warm-up on the first set: every worker and path, not counted
            run(turns(stack, sets[name][: max(clients)], max(clients), warm))
        used = dict.fromkeys(stacks, per_set)
        names = list(stacks)
        for round_ in range(rounds):
            order = names[round_ % len(names) :] + names[: round_ % len(names)]
            for n in clients:
                for name in order:
                    stack = stacks[name]
                    mine = sets[name][used[name] : used[name] + n]
                    used[name] += n
                    result = run(turns(stack, mine, n, block))
                    result.update(round=round_, server=name)
                    blocks.append(result)
                    log(
                        f"  round {round_} {n:>2} clients {name:>17}: {result['turns_s']:6.0f} turns/s "
                        f"p99 {result['p99']:6.1f} ms, server {result['cpu_ms']:.2f} ms CPU per turn, "
                        f"machine busy {result['busy_share']:.0%}, errors {result['errors']}"
                    )
    finally:
        for stack in reversed(up):
            stack.stop()
    return {
        "backend": backend,
        "servers": servers,
        "floor_server": floor_server,
        "clients": clients,
        "rounds": rounds,
        "block": block,
        "warm": warm,
        "workers": workers,
        "threads": {name: stack.threads for name, stack in stacks.items()},
        "labels": {name: stack.label for name, stack in stacks.items()},
        "blocks": blocks,
        "summary": servers_summary(blocks, names[0]),
    }
