"""CPU per turn of two trees, interleaved: bench.serve_cpu in one worker process per tree, blocks
of turns alternating between them, so what else the machine does weighs on both alike.

Each block is `--turns` turns (decorate + report through `threadless_site.asgi.application`) on
a fresh memory of 200 messages; the figure is each worker's CPU per turn (all its threads), and
the paired difference block by block (A − B); on PostgreSQL the same for each worker's backends
(found by the application name given to each, PGAPPNAME). Both trees run this tree's bench/serve_cpu.py
(the older one may not have its worker mode), each with its own tree first on the path.

    git archive <ref> | tar -x -C /tmp/before
    DATABASE_URL=postgres://…/yours REDIS_URL=redis://…/n \\
      python -m bench.serve_cpu_ab /tmp/before . --blocks 24 --turns 40
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

WORKER = Path(__file__).resolve().parent / "serve_cpu.py"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--blocks", type=int, default=24)
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    trees = {"a": Path(args.a).resolve(), "b": Path(args.b).resolve()}
    workers = {}
    for side, tree in trees.items():
        env = {**os.environ, "PYTHONPATH": str(tree), "PGAPPNAME": f"serve_cpu_ab_{side}_{os.getpid()}"}
        env.pop("THREADLESS_VAR_DIR", None)  # each in its own tree's var/serve-cpu
        workers[side] = subprocess.Popen([sys.executable, str(WORKER), "worker"], cwd=tree, env=env, text=True,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        while (line := workers[side].stdout.readline()) and line.strip() != "ready":
            pass
        if not line:
            raise SystemExit(f"the worker in {tree} did not start (run bench/serve_cpu.py there to see why)")
    out: dict[str, list[float]] = {side: [] for side in trees}
    pg: dict[str, list[float]] = {side: [] for side in trees}
    try:
        for block in range(args.blocks):
            for side in ("a", "b") if block % 2 == 0 else ("b", "a"):
                workers[side].stdin.write(f"{args.turns}\n")
                workers[side].stdin.flush()
                cpu, *database = workers[side].stdout.readline().split()
                out[side].append(float(cpu))
                if database and database[0] != "-":
                    pg[side].append(float(database[0]))
    finally:
        for worker in workers.values():
            worker.stdin.close()
            worker.wait(timeout=60)
    pairs = [a - b for a, b in zip(out["a"], out["b"], strict=True)]
    result = {"a": str(trees["a"]), "b": str(trees["b"]), "turns": args.turns,
              "cpu_ms_per_turn": out, "median": {side: statistics.median(v) for side, v in out.items()},
              "a_minus_b_median": statistics.median(pairs),
              "b_lower_in": f"{sum(p > 0 for p in pairs)} of {len(pairs)} blocks"}
    if pg["a"] and len(pg["a"]) == len(pg["b"]):  # PostgreSQL: each worker's backends too (PGAPPNAME)
        pg_pairs = [a - b for a, b in zip(pg["a"], pg["b"], strict=True)]
        result |= {"pg_cpu_ms_per_turn": pg, "pg_median": {side: statistics.median(v) for side, v in pg.items()},
                   "pg_a_minus_b_median": statistics.median(pg_pairs),
                   "pg_b_lower_in": f"{sum(p > 0 for p in pg_pairs)} of {len(pg_pairs)} blocks"}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
