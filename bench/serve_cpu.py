"""CPU per turn (decorate + report) through the ASGI app in one process, no socket.

Every turn is the two POSTs of a live turn, given to `threadless_site.asgi.application` as ASGI
messages by a bare caller, on a memory of 200 messages; the figure is the process's CPU time
(all threads: the event loop and the view threads) per turn, so it moves much less with the
other work on the machine than wall time does. Where the tree has the hot routes
(`threadless_site.asgi.HOT_ROUTES`), each round runs them on, then off (Django's request cycle
to the same handler).

It times the tree it is run from, so one command A/Bs two trees, e.g. main against this branch:

    git archive <ref> | tar -x -C /tmp/before
    (cd /tmp/before && python /path/to/this/bench/serve_cpu.py 300 1)   # repeat, alternating
    python bench/serve_cpu.py 300 1

`python bench/serve_cpu.py worker` serves blocks for bench.serve_cpu_ab (two trees interleaved):
per block, the process's CPU per turn and, on PostgreSQL, its backends' (PGAPPNAME names them).

Embedded default unless DATABASE_URL / REDIS_URL say otherwise (use a database of your own:
each run migrates it and adds a project).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import time
from pathlib import Path

TREE = Path.cwd()


def main() -> None:
    worker = sys.argv[1:2] == ["worker"]  # bench.serve_cpu_ab's side: blocks of turns asked on stdin
    turns = int(sys.argv[1]) if len(sys.argv) > 1 and not worker else 200
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    var = TREE / "var" / "serve-cpu"
    shutil.rmtree(var, ignore_errors=True)
    # Django is set up here, not through a bench.common helper: bench.serve_cpu_ab runs this file
    # inside other trees (PYTHONPATH = that tree), whose bench/ may predate any such helper.
    os.environ.setdefault("THREADLESS_VAR_DIR", str(var))
    os.environ.setdefault("THREADLESS_RATE_LIMIT_PER_MINUTE", "100000000")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
    sys.path.insert(0, str(TREE))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from bench.common import conversation
    from memories.services import memory_create
    from projects.services import key_create, project_create
    from threadless_site import asgi

    project = project_create(name="serve-cpu")
    _key, plaintext = key_create(project=project)
    auth = f"Bearer {plaintext}".encode()

    async def post(path: str, body: bytes) -> int:
        sent: list[dict] = []
        incoming = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive():
            return incoming.pop(0) if incoming else {"type": "http.disconnect"}

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "method": "POST", "path": path, "raw_path": path.encode(), "query_string": b"",
                 "root_path": "", "http_version": "1.1", "scheme": "http", "server": ("127.0.0.1", 80),
                 "client": ("127.0.0.1", 5),
                 "headers": [(b"host", b"127.0.0.1"), (b"authorization", auth), (b"content-type", b"application/json"),
                             (b"content-length", str(len(body)).encode())]}
        await asgi.application(scope, receive, send)
        return sent[0]["status"]

    history = json.dumps({"messages": conversation(200)}).encode()
    user = json.dumps({"messages": [{"role": "user", "content": "what next?"}]}).encode()
    reply = json.dumps({"messages": [{"role": "assistant", "content": "this."}]}).encode()

    def backends_ns() -> dict[int, int]:
        """CPU nanoseconds so far (/proc/<pid>/schedstat) of this process's PostgreSQL backends, found
        by the application name bench.serve_cpu_ab gives each worker (PGAPPNAME); {} elsewhere."""
        from django.db import connection

        app = os.environ.get("PGAPPNAME")
        if connection.vendor != "postgresql" or not app:
            return {}
        with connection.cursor() as cursor:
            cursor.execute("SELECT pid FROM pg_stat_activity WHERE application_name = %s", [app])
            pids = [row[0] for row in cursor.fetchall()]
        found = {}
        for pid in pids:
            try:
                found[pid] = int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                pass
        return found

    pg_ms: list[float] = []  # the database side's CPU per turn of each phase (PostgreSQL, worker mode)

    async def phase(memory_id: str) -> float:
        decorate, report = f"/v1/memories/{memory_id}/decorate", f"/v1/memories/{memory_id}/report"
        assert await post(report, history) == 202
        for _ in range(5):  # warm
            await post(decorate, user)
            await post(report, reply)
        pg_before = await asyncio.to_thread(backends_ns) if worker else {}
        start = time.process_time()
        for _ in range(turns):
            assert await post(decorate, user) == 200
            assert await post(report, reply) == 202
        cpu = (time.process_time() - start) * 1000 / turns
        if pg_before:  # backends that appeared during the phase count from zero
            pg_after = await asyncio.to_thread(backends_ns)
            pg_ms.append(sum(ns - pg_before.get(pid, 0) for pid, ns in pg_after.items()) / 1e6 / turns)
        return cpu

    if worker:  # one block per line read (its number of turns), each on a fresh memory: its CPU per turn
        print("ready", flush=True)
        for line in sys.stdin:
            turns = int(line)
            memory, _ = memory_create(project=project)
            cpu = asyncio.run(phase(memory.id))
            print(round(cpu, 4), round(pg_ms[-1], 4) if pg_ms else "-", flush=True)  # process, PostgreSQL
        return

    has_hot = hasattr(asgi, "HOT_ROUTES")
    modes = ("on", "off") if has_hot else ("off",)
    out: dict = {"tree": str(TREE), "turns": turns, **{mode: [] for mode in modes}}
    for _ in range(rounds):
        for mode in modes:
            if has_hot:
                asgi.HOT_ROUTES = mode == "on"
            memory, _ = memory_create(project=project)
            out[mode].append(round(asyncio.run(phase(memory.id)), 3))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
