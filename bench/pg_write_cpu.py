"""PostgreSQL's own CPU per statement of a turn, two trees (or two schemas) interleaved (issue 17).

A turn's database work as the hot routes send it — decorate's store (`entries_store_turn`, one
statement), decorate's reads (`context_build`: the read-ahead pipeline and whatever it reads
again) and report's write (`messages_join_turn_enqueue`, one statement) — each in autocommit as
in production (so every write commits), on 16 memories of 200 messages (fresh ones every
`--fresh-every` blocks). The figure is the backend's CPU time (`se.sum_exec_runtime` in
/proc/<pid>/sched, microseconds: the server must be local) per call.

Two worker processes, one per side, each on its own database (migrated by that side's tree, so
each has that tree's schema), run blocks of `--turns` turns in turn (A B B A …), so what else the
machine does weighs on both alike; the result is each side's median per block and the paired
difference block by block (A − B). `--sql-a` / `--sql-b`: statements a side runs on its database
after migrating (say, `DROP INDEX entry_window_idx`), to try a schema change in one tree.

    python -m bench.pg_write_cpu /tmp/main-tree . \\
        --db-a postgres://root@127.0.0.1:5432/pgw_a --db-b postgres://root@127.0.0.1:5432/pgw_b

The databases are dropped and created afresh (use names of your own). Each side imports its own
tree's code (PYTHONPATH = that tree) and runs this file as its worker.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

WORKER = Path(__file__).resolve()
PARTS = ("store", "reads", "report")


def _cpu_us(pid: int) -> float:
    for line in Path(f"/proc/{pid}/sched").read_text().splitlines():
        if line.startswith("se.sum_exec_runtime"):
            return float(line.split(":")[1]) * 1000.0
    raise RuntimeError("no se.sum_exec_runtime in /proc/<pid>/sched")


def worker() -> None:
    """One side: migrate, then for every `block N` line on stdin run N turns and answer with the
    backend CPU (µs) per part as one JSON line."""
    tree = Path.cwd()
    os.environ.setdefault("THREADLESS_VAR_DIR", str(tree / "var" / "pg-write-cpu"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
    sys.path.insert(0, str(tree))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    assert connection.vendor == "postgresql", "DATABASE_URL must name a PostgreSQL database"
    call_command("migrate", verbosity=0)
    from bench.common import conversation, new_user_message, reply_message
    from common.messages import entry_fields
    from memories.context import context_build
    from memories.models import Memory
    from memories.services import memory_create, report_accept
    from memories.services.entries import entries_store_turn, messages_join_turn_enqueue
    from projects.services import project_create

    with connection.cursor() as cursor:
        for statement in filter(str.strip, os.environ.get("PG_WRITE_CPU_SQL", "").split(";")):
            cursor.execute(statement)
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    project = project_create(name="pg-write-cpu")
    history = conversation(200)
    memories_per_block = int(os.environ.get("PG_WRITE_CPU_MEMORIES", "16"))  # the bench's 16 clients
    turn_no = 0
    analyzed = False
    print("ready", flush=True)
    memories: list[str] = []
    for line in sys.stdin:
        if line.startswith("fresh"):  # fresh memories of 200 messages
            memories = []
            for _ in range(memories_per_block):
                memory, _ = memory_create(project=project)
                report_accept(memory=memory, messages=history, failures=[])
                memories.append(memory.id)
            if not analyzed:
                with connection.cursor() as cursor:
                    cursor.execute("ANALYZE")
                analyzed = True
            print("{}", flush=True)
            continue
        turns = int(line.split()[1])
        spent = dict.fromkeys(PARTS, 0.0)
        for _ in range(turns):
            memory_id = memories[turn_no % len(memories)]
            user, reply = new_user_message(turn_no), reply_message(turn_no)
            turn_no += 1
            t0 = _cpu_us(pid)
            stored = entries_store_turn(memory=Memory(id=memory_id, project_id=project.id),
                                        items=[entry_fields(user)], budget_tokens=60000, scoped=True)
            t1 = _cpu_us(pid)
            context_build(memory=stored, new_messages=[user], budget_tokens=60000, recall=True,
                          before_seq=stored.last_seq, new_turn=stored.last_turn)
            t2 = _cpu_us(pid)
            messages_join_turn_enqueue(memory_id=memory_id, items=[entry_fields(reply)], project_id=project.id)
            t3 = _cpu_us(pid)
            spent["store"] += t1 - t0
            spent["reads"] += t2 - t1
            spent["report"] += t3 - t2
        print(json.dumps({part: total / turns for part, total in spent.items()}), flush=True)


def _fresh_database(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--db-a", required=True)
    parser.add_argument("--db-b", required=True)
    parser.add_argument("--sql-a", default="")
    parser.add_argument("--sql-b", default="")
    parser.add_argument("--blocks", type=int, default=96)
    parser.add_argument("--turns", type=int, default=16)
    parser.add_argument("--fresh-every", type=int, default=8, help="blocks between fresh memories (each side)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    sides = {"a": (Path(args.a).resolve(), args.db_a, args.sql_a),
             "b": (Path(args.b).resolve(), args.db_b, args.sql_b)}
    workers = {}
    for side, (tree, url, sql) in sides.items():
        _fresh_database(url)
        env = {**os.environ, "PYTHONPATH": str(tree), "DATABASE_URL": url, "PG_WRITE_CPU_SQL": sql}
        env.pop("THREADLESS_VAR_DIR", None)  # each in its own tree's var/pg-write-cpu
        workers[side] = subprocess.Popen([sys.executable, str(WORKER), "worker"], cwd=tree, env=env, text=True,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for side, proc in workers.items():
        assert proc.stdout.readline().strip() == "ready", f"worker {side} did not start"
    blocks: dict[str, list[dict]] = {"a": [], "b": []}
    for n in range(args.blocks):
        for side in ("a", "b") if n % 2 == 0 else ("b", "a"):
            proc = workers[side]
            if n % args.fresh_every == 0:
                proc.stdin.write("fresh\n")
                proc.stdin.flush()
                proc.stdout.readline()
            proc.stdin.write(f"block {args.turns}\n")
            proc.stdin.flush()
            blocks[side].append(json.loads(proc.stdout.readline()))
        a, b = blocks["a"][-1], blocks["b"][-1]
        if args.verbose:
            print(f"block {n + 1:>2}: A " + " ".join(f"{p} {a[p]:6.1f}" for p in PARTS)
                  + " | B " + " ".join(f"{p} {b[p]:6.1f}" for p in PARTS), flush=True)
    for proc in workers.values():
        proc.stdin.close()
        proc.wait()
    print(f"\nbackend CPU per call, µs: median of {args.blocks} blocks of {args.turns} turns "
          "(A − B: median of the paired block differences, and how many blocks B was lower in)")
    for part in (*PARTS, "turn"):
        va, vb = ([sum(x.values()) if part == "turn" else x[part] for x in blocks[side]] for side in ("a", "b"))
        diffs = [x - y for x, y in zip(va, vb, strict=True)]
        print(f"{part:>7}: A {statistics.median(va):7.1f}  B {statistics.median(vb):7.1f}  "
              f"A − B {statistics.median(diffs):+7.1f} (B lower in {sum(d > 0 for d in diffs)} of {len(diffs)})")


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker()
    else:
        main()
