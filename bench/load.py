"""`make bench-load`: the serving stack under concurrency, against its floor.

Four stacks, one after the other in one run, each served by the same server and process model
(`make serve`'s: granian, ASGI, one worker process per CPU, uvloop, THREADLESS_WEB_THREADS threads):

* floor, SQLite / floor, PostgreSQL — `bench.floor`, a bare ASGI app doing the decorate lower
  bound's SQL with the plain driver (insert + commit, window read + json.dumps; report = insert
  + commit);
* embedded default — Threadless on SQLite with the counter file;
* PostgreSQL + Redis — Threadless on its own database (BENCH_LOAD_DB, default `load_bench`) and
  Redis dbs BENCH_REDIS_DBS (default 10,11) of BENCH_REDIS.

Each client (1, 16, 64) is one keep-alive HTTP/1.1 connection on its own memory of 200
messages, doing turns (decorate one user message, then report the reply) for a fixed time; a
raw asyncio client in this process (no HTTP library, on uvloop) keeps the load generator cheap. At 16
clients `/healthz` and `GET /v1/memories/{id}` are measured too. The rate limit stays on (at a
limit no client reaches), so its counter is on the measured path; no Celery worker runs (report's
background work queues on the broker), so the numbers are the web tier's. Loopback only; the
whole run is bounded (`--phase` seconds per phase, ~4 minutes by default).

The target's share (turns/s at 16 clients ≥ 60 % of the floor's) is measured apart, in
interleaved blocks (`run_interleaved`): after the phases, a product and its floor (embedded and
floor-sqlite, postgres and floor-pg) are started side by side, then `--pairs` pairs of `--block`
seconds of 16 clients alternate between them in ABBA order, each block on fresh memories, after a
warm-up that is not counted; the share is the median of the pairs' ratios (with their range and
the pooled ratio). Phases run a minute or more apart on a machine whose other work moves the
floor's own turns/s by 2×; two adjacent blocks see nearly the same machine. Every phase and block
also records the load generator's own CPU per turn (this process) and the machine's busy share.

Web servers (`run_servers`, last, unless `--servers none`): the same app (`--servers-backend`, the
embedded default unless told) under granian (ASGI, `make serve`'s, and WSGI) and gunicorn
(uvicorn-worker and gthread) — and, on request, the threadless-serve of an older tree (BENCH_BEFORE_REF)
with and without its connection hand-off — every one with `--workers` processes, and the bare
floor of that backend, all up at once; then `--rounds` rounds of one `--block` block per server and
client count (16, 64), the servers' order rotating each round, every block on fresh memories. Per
server: the median block's turns/s and p99 with their range, and the median of each round's ratio
to the first server. `make bench-servers` runs only this part.

    python -m bench.load [--phase 6] [--clients 1,16,64]
                         [--stacks floor-sqlite,embedded,floor-pg,postgres]
                         [--pairs 8] [--block PHASE] [--warm 2] [--interleave product:floor,…|none]
                         [--no-sequential] [--servers threadless-serve,granian-asgi,…|none] [--rounds 5]
                         [--servers-backend embedded]
    python -m bench.load --pair-math [--pairs N] < blocks.json      (the pair-ratio summary of given blocks)

`before` (on request: `--stacks …,before`) is the code before this work (the merge base with
main, or BENCH_BEFORE_REF), extracted with `git archive` and served as it was (its own
`threadless-serve` if it has one, else by the product's server), for a before/after in one run
(`--interleave embedded:before`: in ABBA blocks); `before-pg` is the same on PostgreSQL + Redis.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.common import DOCS, ROOT, conversation, machine, quantile

VAR = Path(os.environ.get("BENCH_LOAD_VAR") or ROOT / "var" / "bench-load")
PG_ADMIN = os.environ.get("BENCH_PG_ADMIN", "postgres://root@127.0.0.1:5432/postgres")
PG_DB = os.environ.get("BENCH_LOAD_DB", "load_bench")
REDIS = os.environ.get("BENCH_REDIS", "redis://127.0.0.1:6379")
# The Redis dbs of the PostgreSQL + Redis stack: counters and cache, then the Celery broker.
REDIS_DBS = [int(n) for n in os.environ.get("BENCH_REDIS_DBS", "10,11").split(",")]
HISTORY = 200
BEGIN, END = "<!-- load:begin -->", "<!-- load:end -->"

TARGET_SHARE = 0.60  # turn throughput at 16 clients ≥ 60 % of the floor's
TARGET_TAIL = 3.0  # p99 at 64 clients ≤ 3× p50
TARGET_HTTP_MS = 2.0  # single-client decorate over HTTP ≤ in-process + 2 ms
# Memories beyond the budget: decorate at a budget the HISTORY messages exceed, so recall runs (and,
# with embeddings on, embeds the query), on two projects of the same server: embeddings local (the
# default) and off. Targets: local's turns/s ≥ 60 % of off's, its p99 ≤ 3× its p50.
BEYOND_BUDGET = 600
BEYOND_CLIENTS = 16
TARGET_BEYOND_SHARE = 0.60


def run(coro):
    """Run a coroutine on a fresh event loop: uvloop's, like the servers' (the load generator's own CPU per
    turn is about half asyncio's), unless BENCH_LOAD_LOOP=asyncio."""
    if os.environ.get("BENCH_LOAD_LOOP", "uvloop") == "uvloop":
        import uvloop

        return uvloop.run(coro)
    return asyncio.run(coro)


_T0 = time.time()


def log(*parts) -> None:
    print(f"[bench-load {time.time() - _T0:5.0f} s]", *parts, file=sys.stderr, flush=True)


def proc_stats() -> dict[int, tuple[str, int, int]]:
    """Every process now (Linux /proc): pid → (command name, parent pid, user + system CPU ticks).
    A process that exits while it is read is left out."""
    stats = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                raw = (entry / "stat").read_text()
            except OSError:
                continue
            fields = raw[raw.rindex(")") + 2 :].split()  # after "pid (comm) "
            comm = raw[raw.index("(") + 1 : raw.rindex(")")]
            stats[int(entry.name)] = (comm, int(fields[1]), int(fields[11]) + int(fields[12]))
    return stats


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) used so far by process `pid` and its descendants (Linux /proc):
    the server's own cost, whatever else the machine is doing."""
    stats = proc_stats()
    tree, grew = {pid}, True
    while grew:
        grew = False
        for child, (_comm, parent, _ticks) in stats.items():
            if parent in tree and child not in tree:
                tree.add(child)
                grew = True
    total = sum(stats[p][2] for p in tree if p in stats)
    return total / os.sysconf("SC_CLK_TCK")


def title(pid: int) -> list[str]:
    """The words of a process's command line (a PostgreSQL backend's is its status title); [] if gone."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").split()
    except OSError:
        return []


def db_cpu(database: str) -> dict[str, float]:
    """CPU seconds used so far by the database side (Linux /proc): "postgres", the PostgreSQL
    server's processes that work for `database` (its backends and autovacuum workers, and the
    server's shared ones: checkpointer, WAL writer, background writer…; other databases'
    backends are left out), and "redis", every redis-server process (all its dbs: shared)."""
    stats = proc_stats()
    postmasters = {
        pid
        for pid, (comm, parent, _) in stats.items()
        if comm == "postgres" and stats.get(parent, ("",))[0] != "postgres"
    }
    pg = redis = 0
    for pid, (comm, parent, ticks) in stats.items():
        if comm == "redis-server":
            redis += ticks
        elif pid in postmasters:
            pg += ticks
        elif parent in postmasters:
            words = title(pid)
            client = "autovacuum worker" in " ".join(words) or any("(" in w or w == "[local]" for w in words)
            if database in words or (words and not client):
                pg += ticks
    tick = os.sysconf("SC_CLK_TCK")
    return {"postgres": pg / tick, "redis": redis / tick}


def own_cpu() -> float:
    """CPU seconds (user + system) this process, the load generator, has used so far."""
    t = os.times()
    return t.user + t.system


def machine_cpu() -> tuple[float, float]:
    """The whole machine's busy and total CPU seconds so far, over all cores (Linux /proc/stat):
    over a block, busy ÷ total is the share of the machine in use, ours and everyone else's."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])  # guest time is already inside user
    tick = os.sysconf("SC_CLK_TCK")
    return (total - idle) / tick, total / tick


_handed: set[int] = set()


def free_port() -> int:
    """A port free now: any, or one of BENCH_LOAD_PORTS ("first-last") when set, never the same twice."""
    first, _, last = os.environ.get("BENCH_LOAD_PORTS", "").partition("-")
    candidates = range(int(first), int(last) + 1) if first and last else [0] * 20
    for port in candidates:
        if port in _handed:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            port = s.getsockname()[1]
        if port not in _handed:
            _handed.add(port)
            return port
    raise RuntimeError("no free port (BENCH_LOAD_PORTS)")


# --- a raw HTTP/1.1 keep-alive client -----------------------------------------------------------


class Conn:
    def __init__(self, port: int, auth: str = "") -> None:
        self.port = port
        self.auth = f"Authorization: Bearer {auth}\r\n".encode() if auth else b""

    async def open(self) -> Conn:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self

    async def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + self.auth
        if body is not None:
            head += b"Content-Type: application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n"
        self.writer.write(head + b"\r\n" + (body or b""))
        raw = (await self.reader.readuntil(b"\r\n\r\n")).lower()
        status = int(raw[9:12])  # "HTTP/1.1 200 …"
        # Only the two headers that frame the body are looked for (cheaper than parsing them all).
        at = raw.find(b"\r\ncontent-length:")
        if at >= 0:
            data = await self.reader.readexactly(int(raw[at + 17 : raw.index(b"\r\n", at + 17)]))
        elif b"\r\ntransfer-encoding: chunked" in raw:
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                parts.append(chunk[:-2])
            data = b"".join(parts)
        else:
            data = b""
        return status, data

    def close(self) -> None:
        self.writer.close()


# --- stacks ------------------------------------------------------------------------------------


class Stack:
    name = ""
    label = ""
    server = "granian-asgi"  # which web server runs it (SERVERS): `make serve`'s
    product = False
    inproc = False
    pg = False  # on PostgreSQL (+ Redis): the database side's CPU is measured too
    database = PG_DB  # on PostgreSQL: its database, whose backends' CPU is the stack's
    cwd = ROOT

    def __init__(self, workers: int, threads: int, slot: str = "") -> None:
        self.workers, self.threads = workers, threads
        self.slot = slot or self.name  # its files under VAR (a second instance of a stack gets its own)
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.key = ""
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.env.pop("THREADLESS_WEB_THREADS", None)
        if not threads:  # the product's default: 1 on SQLite, 8 on PostgreSQL
            threads = self.threads = 8 if isinstance(self, (FloorPostgres, Postgres)) else 1
        self.env["THREADLESS_WEB_THREADS"] = str(threads)

    # paths
    def decorate_path(self, memory: str) -> str:
        return f"/v1/memories/{memory}/decorate" if self.product else f"/decorate/{memory}"

    def report_path(self, memory: str) -> str:
        return f"/v1/memories/{memory}/report" if self.product else f"/report/{memory}"

    def get_path(self, memory: str) -> str:
        return f"/v1/memories/{memory}" if self.product else f"/memory/{memory}"

    def command(self) -> list[str]:
        raise NotImplementedError

    def prepare(self) -> None:
        pass

    def start(self) -> None:
        self.prepare()
        self.log = open(VAR / f"{self.slot}.log", "w")  # noqa: SIM115 - closed in stop()
        # A session of its own: whatever its processes leave behind is killed with it (stop).
        self.proc = subprocess.Popen(
            self.command(),
            cwd=self.cwd,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        # A loaded 2-core machine took over 60 s to import Django in both workers, minutes for several
        # servers.
        deadline = time.time() + float(os.environ.get("BENCH_LOAD_START_SECONDS", "600"))
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    if b" 200 " in s.recv(100):
                        return
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        self.stop()  # never leave a half-started server behind
        raise RuntimeError(f"{self.name} did not start: see {VAR / (self.slot + '.log')}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            try:  # a worker its parent did not stop (granian's, stopped while it was still loading the app)
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.log.close()

    async def memories(self, n: int, prefix: str = "", parallel: int = 1, key: str = "") -> list[str]:
        """`n` memories of HISTORY messages each, made over `parallel` connections (in the project
        of `key`, when given)."""
        history = json.dumps({"messages": conversation(HISTORY)}).encode()

        async def some(numbers: range) -> list[str]:
            conn = await Conn(self.port, key or self.key).open()
            out = []
            for i in numbers:
                if self.product:
                    status, body = await conn.request(
                        "POST", "/v1/memories", json.dumps({"external_id": f"u{prefix}{i}"}).encode()
                    )
                    memory = json.loads(body)["id"]
                    status, _ = await conn.request("POST", f"/v1/memories/{memory}/report", history)
                else:
                    memory = f"m{prefix}{i}"
                    status, _ = await conn.request("POST", f"/load/{memory}", history)
                assert status in (200, 201, 202), status
                out.append(memory)
            conn.close()
            return out

        parts = await asyncio.gather(*(some(range(k, n, parallel)) for k in range(parallel)))
        ordered = [""] * n
        for k, part in enumerate(parts):
            ordered[k::parallel] = part
        return ordered


class FloorStack(Stack):
    def __init__(self, workers: int, threads: int, slot: str = "") -> None:
        super().__init__(workers, threads, slot)
        self.env["FLOOR_DB"] = self.floor_db()

    def floor_db(self) -> str:
        raise NotImplementedError

    def prepare(self) -> None:
        subprocess.run(
            [sys.executable, "-c", "from bench.floor import setup; setup()"],
            cwd=ROOT,
            env=self.env,
            check=True,
        )

    def command(self) -> list[str]:
        # The product's server and process model, serving the floor's app.
        return server_command(self.server, "bench.floor:app", "", self.port, self.workers, self.threads)


class FloorSqlite(FloorStack):
    name, label = "floor-sqlite", "floor (bare ASGI + sqlite3)"

    def floor_db(self) -> str:
        db = VAR / f"{self.slot}.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        return str(db)


class FloorPostgres(FloorStack):
    name, label = "floor-pg", "floor (bare ASGI + psycopg)"
    pg = True

    def floor_db(self) -> str:
        # Its own database, so that it can run next to the product's (the interleaved blocks).
        self.database = f"{PG_DB}_{self.slot.replace('-', '_')}"
        return f"postgres://root@127.0.0.1:5432/{self.database}"

    def prepare(self) -> None:
        fresh_pg_database(self.database)
        super().prepare()


class ProductStack(Stack):
    product = True
    inproc = True

    def manage(self, *args: str) -> str:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=self.cwd,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    def prepare(self) -> None:
        self.manage("migrate", "--noinput", "-v0")
        project = json.loads(self.manage("create_project", "Load", "--json"))["id"]
        self.key = json.loads(self.manage("create_key", "--project", project, "--json"))["key"]
        # The same load with embeddings off (memories beyond the budget: recall stays lexical).
        off = json.loads(self.manage("create_project", "Load, embeddings off", "--json"))["id"]
        self.key_off = json.loads(self.manage("create_key", "--project", off, "--json"))["key"]
        self.manage(
            "shell",
            "-c",
            "from projects.models import Project; Project.objects.filter(pk="
            f"{off!r}).update(model_config={{'embeddings': {{'provider': 'off'}}}})",
        )

    # threadless-serve also runs a supervised Celery worker; this bench measures the web tier alone.
    worker_flag = ["--no-worker"]

    def command(self) -> list[str]:
        if self.server in ("threadless-serve", "uvicorn"):  # an older tree's own server (before_tree)
            return [
                sys.executable,
                "-m",
                "threadless_site.serve",
                "--port",
                str(self.port),
                "--workers",
                str(self.workers),
                *self.worker_flag,
            ]
        return server_command(
            self.server,
            "threadless_site.asgi:application",
            "threadless_site.wsgi:application",
            self.port,
            self.workers,
            self.threads,
        )


class Embedded(ProductStack):
    name, label = "embedded", "Threadless, embedded default (SQLite)"

    def __init__(self, workers: int, threads: int, slot: str = "") -> None:
        super().__init__(workers, threads, slot)
        var = VAR / self.slot
        shutil.rmtree(var, ignore_errors=True)
        var.mkdir(parents=True)
        for name in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"):
            self.env.pop(name, None)
        self.env.update({"THREADLESS_VAR_DIR": str(var), "THREADLESS_RATE_LIMIT_PER_MINUTE": "100000000"})


class Postgres(ProductStack):
    name, label = "postgres", "Threadless, PostgreSQL + Redis"
    pg = True

    def __init__(self, workers: int, threads: int, slot: str = "") -> None:
        super().__init__(workers, threads, slot)
        var = VAR / self.slot
        shutil.rmtree(var, ignore_errors=True)
        var.mkdir(parents=True)
        if self.slot != self.name:  # a second instance (the servers' comparison): a database of its own
            self.database = f"{PG_DB}_{self.slot.replace('-', '_')}"
        self.env.update(
            {
                "THREADLESS_VAR_DIR": str(var),
                "DATABASE_URL": f"postgres://root@127.0.0.1:5432/{self.database}",
                "REDIS_URL": f"{REDIS}/{REDIS_DBS[0]}",
                "CELERY_BROKER_URL": f"{REDIS}/{REDIS_DBS[1]}",
                "THREADLESS_CELERY_QUEUE": "load-bench",
                "THREADLESS_RATE_LIMIT_PER_MINUTE": "100000000",
            }
        )

    def prepare(self) -> None:
        fresh_pg_database(self.database)
        if self.slot == self.name:  # several instances share the Redis dbs: run_servers flushes them once
            flush_redis()
        super().prepare()


def flush_redis() -> None:
    import redis

    for db in REDIS_DBS:
        redis.Redis.from_url(f"{REDIS}/{db}").flushdb()


def before_tree(into: str) -> tuple[Path, bool, str]:
    """The code before this work (git BENCH_BEFORE_REF, default the merge base with main),
    extracted with `git archive` into VAR/`into`: (its directory, has threadless-serve, label)."""
    ref = (
        os.environ.get("BENCH_BEFORE_REF")
        or subprocess.run(
            ["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    )
    cwd = VAR / into
    shutil.rmtree(cwd, ignore_errors=True)
    cwd.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(cwd)], input=archive, check=True)
    # Code that has its own production server is served by it, in the same process model.
    served = (cwd / "threadless_site" / "serve.py").exists()
    how = "threadless-serve" if served else "granian, as `make serve`"
    return cwd, served, f"main @{ref[:7]}, {how}"


class Before(Embedded):
    """The code before this work, served as it was: by its `threadless-serve` if it has one, else
    by the same server as the product (`before_tree`)."""

    name = "before"
    inproc = False

    def __init__(self, workers: int, threads: int, slot: str = "") -> None:
        super().__init__(workers, threads, slot)
        self.cwd, self.served, how = before_tree("before-src")
        self.label = f"before ({how})"
        self.worker_flag = worker_flag_of(self.cwd)
        if self.served:
            self.server = "threadless-serve"


class BeforePostgres(Postgres):
    """`before` on PostgreSQL + Redis (the same database and Redis dbs as `postgres`, fresh)."""

    name = "before-pg"
    inproc = False

    def __init__(self, workers: int, threads: int, slot: str = "") -> None:
        super().__init__(workers, threads, slot)
        self.cwd, served, how = before_tree("before-pg-src")
        self.label = f"before, PostgreSQL + Redis ({how})"
        self.worker_flag = worker_flag_of(self.cwd)
        if served:
            self.server = "threadless-serve"


def worker_flag_of(tree: Path) -> list[str]:
    """`--no-worker` for a `threadless-serve` that knows it (older ones ran no worker at all)."""
    serve = tree / "threadless_site" / "serve.py"
    return ["--no-worker"] if serve.exists() and "--no-worker" in serve.read_text() else []


def fresh_pg_database(name: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


# --- web servers: the same app under each --------------------------------------------------------

BIN = Path(sys.executable).parent
# name → (label, interface). Each runs `workers` processes; a WSGI server runs `threads` threads in each
# (the product's THREADLESS_WEB_THREADS), an ASGI one the app as it is (its sync views on that many threads).
# threadless-serve and uvicorn run BENCH_BEFORE_REF's tree (the merge base with main unless told), which
# had threadless-serve: uvicorn workers, each connection handed by the parent to the least busy one.
SERVERS = {
    "threadless-serve": ("threadless-serve (uvicorn, connections handed to the least busy process)", "asgi"),
    "uvicorn": ("uvicorn's own workers (threadless-serve, THREADLESS_WEB_BALANCE=0)", "asgi"),
    "granian-asgi": ("granian, ASGI", "asgi"),
    "granian-wsgi": ("granian, WSGI", "wsgi"),
    "gunicorn-uvicorn": ("gunicorn + uvicorn-worker, ASGI", "asgi"),
    "gunicorn-gthread": ("gunicorn gthread, WSGI", "wsgi"),
}


def server_command(
    server: str, asgi_app: str, wsgi_app: str, port: int, workers: int, threads: int
) -> list[str]:
    """The command line of `server` serving the app on 127.0.0.1:`port`: `workers` processes, no access
    log, uvloop where the server takes an event loop, a backlog of 2048 (as threadless-serve)."""
    host, interface = "127.0.0.1", SERVERS[server][1]
    app = asgi_app if interface == "asgi" else wsgi_app
    if not app:
        raise ValueError(f"{server} serves WSGI: this stack has no WSGI app")
    if server in ("threadless-serve", "uvicorn"):  # run in a before_tree (server_stack)
        return [
            sys.executable,
            "-m",
            "threadless_site.serve",
            "--app",
            app,
            "--host",
            host,
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--no-worker",
        ]
    if server.startswith("granian"):
        command = [
            str(BIN / "granian"),
            "--interface",
            interface,
            "--host",
            host,
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--http",
            "1",
            "--no-ws",
            "--backlog",
            "2048",
            "--log-level",
            "warning",
        ]
        if interface == "asgi":
            command += ["--loop", "uvloop"]
        else:
            command += ["--blocking-threads", str(threads)]
        return [*command, app]
    if server.startswith("gunicorn"):
        command = [
            str(BIN / "gunicorn"),
            "--bind",
            f"{host}:{port}",
            "--workers",
            str(workers),
            "--backlog",
            "2048",
            "--graceful-timeout",
            "30",
            "--log-level",
            "warning",
        ]
        if interface == "asgi":
            command += ["--worker-class", "uvicorn_worker.UvicornWorker"]
        else:
            command += ["--worker-class", "gthread", "--threads", str(threads)]
        return [*command, app]
    raise ValueError(f"unknown server {server!r}: one of {', '.join(SERVERS)}")


def server_stack(backend: str, server: str, workers: int, threads: int) -> Stack:
    """A stack of `backend` ("embedded" / "postgres", or a floor) served by `server`, with files (and a
    database) of its own, so that every server of a comparison can be up at once."""
    stack = STACKS[backend](workers, threads, slot=f"{backend}-{server}")
    stack.server = server
    stack.label = SERVERS[server][0] + ("" if stack.product else f" — {stack.label}")
    if server in ("threadless-serve", "uvicorn"):
        if not stack.product:
            raise SystemExit(f"--floor-server {server}: the floor runs under a server of this tree")
        if not (stack.cwd / "threadless_site" / "serve.py").exists():
            stack.cwd, served, how = before_tree(f"{stack.slot}-src")
            if not served:
                raise SystemExit(f"{server}: BENCH_BEFORE_REF's tree has no threadless-serve")
            stack.worker_flag = worker_flag_of(stack.cwd)
            stack.label += f" ({how})"
    if server == "uvicorn":
        stack.env["THREADLESS_WEB_BALANCE"] = "0"
    stack.env["THREADLESS_ACCESS_LOG"] = "0"
    return stack


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
            name: run(stack.memories(per_set * (rounds + 1), prefix="s", parallel=4))
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


def _spread(values: list[float]) -> dict:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def servers_summary(blocks: list[dict], reference: str) -> dict:
    """Per server and client count: the blocks' turns/s, p99 and server CPU per turn (median and range),
    and the ratios to `reference`'s block of the same round (turns/s ÷ its turns/s, p99 ÷ its p99; median
    and range over the rounds)."""
    out: dict = {}
    by_key = {(b["server"], b["clients"], b["round"]): b for b in blocks}
    for server, clients, _round in sorted(by_key):
        mine = [b for (s, c, _r), b in by_key.items() if s == server and c == clients]
        row = {
            key: _spread([b[key] for b in mine]) for key in ("turns_s", "p99", "p50", "cpu_ms", "busy_share")
        }
        row["errors"] = sum(b["errors"] for b in mine)
        ratios = {"turns_s": [], "p99": []}
        for b in mine:
            ref = by_key.get((reference, clients, b["round"]))
            if ref and ref["turns_s"] and ref["p99"]:
                ratios["turns_s"].append(b["turns_s"] / ref["turns_s"])
                ratios["p99"].append(b["p99"] / ref["p99"])
        row["vs_reference"] = {key: _spread(values) for key, values in ratios.items() if values}
        out.setdefault(server, {})[str(clients)] = row
    return out


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


# The products' shares measured by interleaved blocks (the default run's 16-client share): product → floor.
INTERLEAVE = {"embedded": "floor-sqlite", "postgres": "floor-pg"}
STACKS = {
    "floor-sqlite": FloorSqlite,
    "before": Before,
    "embedded": Embedded,
    "floor-pg": FloorPostgres,
    "before-pg": BeforePostgres,
    "postgres": Postgres,
}
FLOOR_OF = {
    "embedded": "floor-sqlite",
    "before": "floor-sqlite",
    "postgres": "floor-pg",
    "before-pg": "floor-pg",
}


# --- phases ------------------------------------------------------------------------------------


async def turns(
    stack: Stack, memories: list[str], clients: int, seconds: float, budget: int = 0, key: str = ""
) -> dict:
    """`clients` connections doing turns (decorate + report) for `seconds` (decorate at `budget`
    tokens when given; with another project's `key`)."""
    conns = [await Conn(stack.port, key or stack.key).open() for _ in range(clients)]
    extra = {"budget_tokens": budget} if budget else {}
    latencies: list[float] = []
    decorates: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds

    async def one(conn: Conn, memory: str, c: int) -> None:
        nonlocal errors
        i = 0
        while time.perf_counter() < deadline:
            i += 1
            user = json.dumps(
                {"messages": [{"role": "user", "content": f"client {c} question {i}: what next?"}], **extra}
            )
            reply = json.dumps(
                {"messages": [{"role": "assistant", "content": f"answer {i} for client {c}."}]}
            )
            start = time.perf_counter()
            status, _ = await conn.request("POST", stack.decorate_path(memory), user.encode())
            mid = time.perf_counter()
            status2, _ = await conn.request("POST", stack.report_path(memory), reply.encode())
            end = time.perf_counter()
            if status != 200 or status2 not in (200, 202):
                errors += 1
            latencies.append(end - start)
            decorates.append(mid - start)

    db = db_cpu(stack.database) if stack.pg else {}
    busy, total = machine_cpu()
    gen = own_cpu()
    started, cpu = time.perf_counter(), tree_cpu(stack.proc.pid)
    await asyncio.gather(*(one(conn, memories[i], i) for i, conn in enumerate(conns)))
    elapsed, cpu = time.perf_counter() - started, tree_cpu(stack.proc.pid) - cpu
    gen = own_cpu() - gen
    busy_after, total_after = machine_cpu()
    db_after = db_cpu(stack.database) if stack.pg else {}
    for conn in conns:
        conn.close()
    ms = [x * 1000 for x in latencies]
    n = max(1, len(latencies))
    machine = max(total_after - total, 1e-9)  # CPU seconds the machine had over the phase, all cores
    out = {
        "clients": clients,
        "turns": len(latencies),
        "seconds": elapsed,
        "turns_s": len(latencies) / elapsed,
        "cpu_ms": cpu * 1000 / n,
        "gen_cpu_ms": gen * 1000 / n,
        "p50": quantile(ms, 0.5),
        "p99": quantile(ms, 0.99),
        "errors": errors,
        "decorate_p50": quantile([x * 1000 for x in decorates], 0.5),
        # shares of the whole machine over the phase: the server's, the load generator's, all of it
        "server_share": cpu / machine,
        "gen_share": gen / machine,
        "busy_share": (busy_after - busy) / machine,
    }
    for side, key in (("postgres", "pg_cpu_ms"), ("redis", "redis_cpu_ms")):  # the database side's, per turn
        if db:
            out[key] = (db_after[side] - db[side]) * 1000 / n
    if db:
        out["pg_share"] = (db_after["postgres"] - db["postgres"]) / machine
    return out


async def requests(stack: Stack, path_for, clients: int, seconds: float, memories: list[str]) -> dict:
    conns = [await Conn(stack.port, stack.key).open() for _ in range(clients)]
    count = errors = 0
    lat: list[float] = []
    deadline = time.perf_counter() + seconds

    async def one(conn: Conn, memory: str) -> None:
        nonlocal count, errors
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            status, _ = await conn.request("GET", path_for(memory))
            lat.append(time.perf_counter() - start)
            count += 1
            errors += status != 200

    started = time.perf_counter()
    await asyncio.gather(*(one(conn, memories[i % len(memories)]) for i, conn in enumerate(conns)))
    elapsed = time.perf_counter() - started
    for conn in conns:
        conn.close()
    return {"rps": count / elapsed, "p50": quantile([x * 1000 for x in lat], 0.5), "errors": errors}


PROBE_CALLS = (
    60  # single-client decorates on a fresh memory, the first 10 not counted (bench.load_inproc too)
)


async def decorate_probe(stack: Stack, memory: str) -> float:
    """One client's decorate p50 over HTTP on a memory of HISTORY messages, call for call what
    bench.load_inproc times in process on another such memory: the HTTP cost, nothing else."""
    conn = await Conn(stack.port, stack.key).open()
    times = []
    for i in range(PROBE_CALLS):
        body = json.dumps({"messages": [{"role": "user", "content": f"in process {i}?"}]}).encode()
        start = time.perf_counter()
        status, _ = await conn.request("POST", stack.decorate_path(memory), body)
        assert status == 200, status
        if i >= 10:
            times.append((time.perf_counter() - start) * 1000)
        reply = json.dumps({"messages": [{"role": "assistant", "content": f"answer {i}."}]}).encode()
        status, _ = await conn.request("POST", stack.report_path(memory), reply)  # as in process: not timed
        assert status in (200, 202), status
    conn.close()
    return quantile(times, 0.5)


def run_stack(stack: Stack, clients: list[int], phase: float) -> dict:
    log(f"{stack.name}: starting {stack.workers} worker(s) × {stack.threads} threads")
    stack.start()
    try:
        # Two more memories than clients, untouched by the turns: the HTTP probe's and the
        # in-process run's, so both time decorate on a memory of the same size.
        *memories, probe_http, probe_inproc = run(stack.memories(max(clients) + 2))
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


def beyond_budget(stack: Stack, memories: list[str], phase: float) -> dict:
    """Memories beyond the budget: BEYOND_CLIENTS clients decorating at BEYOND_BUDGET tokens, so
    recall runs on every turn, on the run's memories (embeddings local, the default) and on as many
    of the project with embeddings off, in ABBA blocks of half a phase each after a warm-up of each
    (the model's load), so both sides see the same machine. Per side: turns/s over its blocks, the
    blocks' mean p50 / p99 and server CPU per turn."""
    off = run(stack.memories(len(memories), prefix="off", key=stack.key_off))
    sides = {"local": (memories, ""), "off": (off, stack.key_off)}
    for mems, key in sides.values():
        run(turns(stack, mems, len(mems), 1.5, BEYOND_BUDGET, key))
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


# --- interleaved blocks: the share of the floor at 16 clients ---------------------------------------


def schedule(pairs: int) -> list[tuple[int, str]]:
    """The blocks' order, ABBA: (pair, side) with the floor first in even pairs and second in odd
    ones (floor, product, product, floor, floor, …), so a drift in the machine's load weighs on
    both sides alike."""
    out = []
    for pair in range(pairs):
        sides = ("floor", "product") if pair % 2 == 0 else ("product", "floor")
        out += [(pair, side) for side in sides]
    return out


def pair_summary(blocks: list[dict]) -> dict:
    """The share of the floor from interleaved blocks (each {"pair", "side", "turns", "seconds"}):
    each pair's product turns/s ÷ floor turns/s; their median, range, and the pooled ratio (all the
    product's turns over all its seconds ÷ the same for the floor). A pair missing a side, or
    whose floor block served nothing, is left out."""
    by_pair: dict[int, dict[str, dict]] = {}
    for block in blocks:
        by_pair.setdefault(block["pair"], {})[block["side"]] = block
    ratios, sums = [], {"floor": [0, 0.0], "product": [0, 0.0]}
    for _pair, sides in sorted(by_pair.items()):
        if set(sides) != {"floor", "product"} or not sides["floor"]["turns"]:
            continue
        rate = {side: b["turns"] / b["seconds"] for side, b in sides.items()}
        ratios.append(rate["product"] / rate["floor"])
        for side, b in sides.items():
            sums[side][0] += b["turns"]
            sums[side][1] += b["seconds"]
    if not ratios:
        return {"pairs": 0, "ratios": []}
    pooled = (sums["product"][0] / sums["product"][1]) / (sums["floor"][0] / sums["floor"][1])
    return {
        "pairs": len(ratios),
        "ratios": ratios,
        "median": statistics.median(ratios),
        "min": min(ratios),
        "max": max(ratios),
        "pooled": pooled,
    }


def cpu_share(blocks: list[dict]) -> dict:
    """The same pairs' share by CPU: the floor's server + PostgreSQL CPU per turn ÷ the product's, per
    pair (what the share of the floor would be on a machine given wholly to the two, each turn's cost
    being what it was). Redis (shared with the machine's other users) and the load generator are
    left out. Median and range, as pair_summary; pairs without CPU figures are left out."""
    by_pair: dict[int, dict[str, dict]] = {}
    for block in blocks:
        by_pair.setdefault(block["pair"], {})[block["side"]] = block
    ratios = []
    for _pair, sides in sorted(by_pair.items()):
        if set(sides) != {"floor", "product"} or not all(
            "cpu_ms" in b and b["turns"] for b in sides.values()
        ):
            continue
        cost = {side: b["cpu_ms"] + b.get("pg_cpu_ms", 0.0) for side, b in sides.items()}
        if cost["product"] > 0:
            ratios.append(cost["floor"] / cost["product"])
    if not ratios:
        return {"pairs": 0, "ratios": []}
    return {
        "pairs": len(ratios),
        "ratios": ratios,
        "median": statistics.median(ratios),
        "min": min(ratios),
        "max": max(ratios),
    }


def side_summary(blocks: list[dict], side: str) -> dict:
    """One side's blocks: the median (and range) per block of turns/s and of each CPU per turn, the
    pooled CPU per turn, and the errors summed."""
    mine = [b for b in blocks if b["side"] == side]
    out: dict = {
        "blocks": len(mine),
        "turns": sum(b["turns"] for b in mine),
        "errors": sum(b["errors"] for b in mine),
    }
    for key in (
        "turns_s",
        "cpu_ms",
        "pg_cpu_ms",
        "redis_cpu_ms",
        "gen_cpu_ms",
        "gen_share",
        "server_share",
        "pg_share",
        "busy_share",
        "p50",
        "p99",
    ):
        values = [b[key] for b in mine if key in b]
        if values:
            out[key] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    turns = max(1, out["turns"])
    for key in ("cpu_ms", "pg_cpu_ms", "gen_cpu_ms"):
        if all(key in b for b in mine) and mine:
            out[key]["pooled"] = sum(b[key] * b["turns"] for b in mine) / turns
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
            side: run(stack.memories(clients * (pairs + 1), prefix="i", parallel=4))
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
        [sys.executable, "-m", "bench.load_inproc", memory],
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


# --- the report --------------------------------------------------------------------------------


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
        "for every stack (granian, ASGI, uvloop, as `make serve`"
        + ("; `before`: as it was" if "before" in results["stacks"] else "")
        + "), threads per process: "
        + ", ".join(
            f"{n} {r.get('threads', results['threads'])}"
            for n, r in results["stacks"].items()
            if n != "before"
        )
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
            "and served as it was (same processes and threads). "
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--phase", type=float, default=6.0, help="seconds per phase")
    parser.add_argument("--clients", default="1,16,64")
    parser.add_argument("--stacks", default="floor-sqlite,embedded,floor-pg,postgres")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--threads",
        type=int,
        default=int(os.environ.get("THREADLESS_WEB_THREADS", "0")),
        help="threads per process for every stack (default: each stack's own default)",
    )
    parser.add_argument("--doc", default=str(DOCS / "benchmarks.md"))
    parser.add_argument("--no-doc", action="store_true")
    parser.add_argument("--from-json", default="", help="only rewrite the doc from a saved results.json")
    parser.add_argument(
        "--interleave",
        default="",
        help="product:floor pairs measured in interleaved blocks, comma-separated (default: "
        "embedded:floor-sqlite and postgres:floor-pg, those whose two stacks are in --stacks; "
        "'none': no blocks). A stack paired with itself runs as two instances.",
    )
    parser.add_argument("--pairs", type=int, default=8, help="interleaved: pairs of blocks (ABBA)")
    parser.add_argument(
        "--block",
        type=float,
        default=0.0,
        help="interleaved: seconds per block (default: --phase, so that a block is a phase's workload)",
    )
    parser.add_argument(
        "--warm", type=float, default=2.0, help="interleaved: seconds of warm-up per stack, not counted"
    )
    parser.add_argument("--interleave-clients", type=int, default=16, help="interleaved: clients per block")
    parser.add_argument("--no-sequential", action="store_true", help="only the interleaved blocks")
    parser.add_argument(
        "--servers",
        default="granian-asgi,granian-wsgi,gunicorn-uvicorn,gunicorn-gthread",
        help=f"web servers compared on the same app, comma-separated, the first the reference (of "
        f"{', '.join(SERVERS)}; threadless-serve and uvicorn run BENCH_BEFORE_REF's tree); "
        "'none': no comparison",
    )
    parser.add_argument(
        "--servers-backend",
        default="embedded",
        choices=["embedded", "postgres"],
        help="servers: the app's backend (its floor is measured beside them)",
    )
    parser.add_argument("--floor-server", default="granian-asgi", help="servers: the server of the floor")
    parser.add_argument(
        "--rounds", type=int, default=5, help="servers: rounds (one block per server and client count)"
    )
    parser.add_argument("--servers-clients", default="16,64", help="servers: client counts")
    parser.add_argument(
        "--pair-math",
        action="store_true",
        help="print the summary (pair_summary) of the blocks read as JSON from stdin, and the "
        "order of --pairs pairs (schedule), as JSON; runs nothing",
    )
    args = parser.parse_args()
    if args.pair_math:
        blocks = json.load(sys.stdin)
        print(
            json.dumps(
                {"summary": pair_summary(blocks), "cpu": cpu_share(blocks), "schedule": schedule(args.pairs)}
            )
        )
        return
    VAR.mkdir(parents=True, exist_ok=True)
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text())
        write_doc(section(results, chart(results, DOCS / "benchmarks-load.png")), Path(args.doc))
        return
    clients = [int(c) for c in args.clients.split(",")]
    names = args.stacks.split(",")
    if args.interleave == "none":
        pairs = []
    elif args.interleave:
        pairs = [tuple(pair.split(":")) for pair in args.interleave.split(",")]
    else:
        pairs = [
            (product, floor) for product, floor in INTERLEAVE.items() if product in names and floor in names
        ]
    results = {
        "machine": machine(),
        "workers": args.workers,
        "threads": args.threads,
        "phase": args.phase,
        "stacks": {},
        "interleaved": {},
    }
    started = time.time()
    for name in [] if args.no_sequential else names:
        stack = STACKS[name](args.workers, args.threads)
        results["stacks"][name] = run_stack(stack, clients, args.phase)
        if stack.inproc:
            results["stacks"][name]["inproc"] = in_process(stack, results["stacks"][name]["memory"])
    for product_name, floor_name in pairs:
        if product_name == floor_name and STACKS[product_name].product:
            raise SystemExit(
                f"--interleave {product_name}:{floor_name}: a product stack cannot run twice at once"
            )
        floor = STACKS[floor_name](args.workers, args.threads)
        product = STACKS[product_name](
            args.workers, args.threads, slot=f"{product_name}-b" if product_name == floor_name else ""
        )
        if product_name == floor_name:
            product.label += " (a second instance)"
        results["interleaved"][product.slot] = run_interleaved(
            product, floor, args.interleave_clients, args.pairs, args.block or args.phase, args.warm
        )
    if args.servers != "none":
        results["servers"] = run_servers(
            args.servers_backend,
            args.servers.split(","),
            args.floor_server,
            [int(c) for c in args.servers_clients.split(",")],
            args.rounds,
            args.block or args.phase,
            args.warm,
            args.workers,
            args.threads,
        )
        (VAR / "servers.json").write_text(json.dumps(results["servers"], indent=1))
    results["seconds"] = time.time() - started
    (VAR / "results.json").write_text(json.dumps(results, indent=1))
    log(f"done in {results['seconds']:.0f} s")
    charted = chart(results, DOCS / "benchmarks-load.png") if not args.no_doc else False
    text = section(results, charted)
    print(text)
    if not args.no_doc:
        write_doc(text, Path(args.doc))


if __name__ == "__main__":
    main()
