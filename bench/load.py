"""`make bench-load`: the serving stack under concurrency, against its floor (issue 17).

Four stacks, one after the other in one run, each served by the same server and process model
(uvicorn, one worker process per CPU, uvloop + httptools, THREADLESS_WEB_THREADS threads):

* floor, SQLite / floor, PostgreSQL — `bench.floor`, a bare ASGI app doing the decorate lower
  bound's SQL with the plain driver (insert + commit, window read + json.dumps; report = insert
  + commit);
* embedded default — Threadless on SQLite with the counter file (`threadless-serve`);
* PostgreSQL + Redis — Threadless on its own database (BENCH_LOAD_DB, default `load_bench`) and
  Redis dbs BENCH_REDIS_DBS (default 10,11) of BENCH_REDIS.

Each client (1, 16, 64) is one keep-alive HTTP/1.1 connection on its own memory of 200
messages, doing turns (decorate one user message, then report the reply) for a fixed time; a
raw asyncio client in this process (no HTTP library) keeps the load generator cheap. At 16
clients `/healthz` and `GET /v1/memories/{id}` are measured too. The rate limit stays on (at a
limit no client reaches), so its counter is on the measured path; no Celery worker runs (report's
background work queues on the broker), so the numbers are the web tier's. Loopback only; the
whole run is bounded (`--phase` seconds per phase, ~4 minutes by default).

    python -m bench.load [--phase 6] [--clients 1,16,64] [--stacks floor-sqlite,before,embedded,floor-pg,postgres]

`before` is the code before this work (the merge base with main, or BENCH_BEFORE_REF), extracted
with `git archive` and served as it was (its own `threadless-serve` if it has one, else one plain
uvicorn process), for a before/after in one run; `before-pg` is the same on PostgreSQL + Redis
(not in the default run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from bench.common import DOCS, ROOT, conversation, machine, quantile

VAR = ROOT / "var" / "bench-load"
PG_ADMIN = os.environ.get("BENCH_PG_ADMIN", "postgres://root@127.0.0.1:5432/postgres")
PG_DB = os.environ.get("BENCH_LOAD_DB", "load_bench")
PG_URL = f"postgres://root@127.0.0.1:5432/{PG_DB}"
REDIS = os.environ.get("BENCH_REDIS", "redis://127.0.0.1:6379")
# The Redis dbs of the PostgreSQL + Redis stack: counters and cache, then the Celery broker.
REDIS_DBS = [int(n) for n in os.environ.get("BENCH_REDIS_DBS", "10,11").split(",")]
HISTORY = 200
BEGIN, END = "<!-- load:begin -->", "<!-- load:end -->"

TARGET_SHARE = 0.60  # turn throughput at 16 clients ≥ 60 % of the floor's
TARGET_TAIL = 3.0  # p99 at 64 clients ≤ 3× p50
TARGET_HTTP_MS = 2.0  # single-client decorate over HTTP ≤ in-process + 2 ms


def log(*parts) -> None:
    print("[bench-load]", *parts, file=sys.stderr, flush=True)


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
            fields = raw[raw.rindex(")") + 2:].split()  # after "pid (comm) "
            comm = raw[raw.index("(") + 1:raw.rindex(")")]
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


def db_cpu(database: str = PG_DB) -> dict[str, float]:
    """CPU seconds used so far by the database side (Linux /proc): "postgres", the PostgreSQL
    server's processes that work for `database` (its backends and autovacuum workers, and the
    server's shared ones: checkpointer, WAL writer, background writer…; other databases'
    backends are left out), and "redis", every redis-server process (all its dbs: shared)."""
    stats = proc_stats()
    postmasters = {pid for pid, (comm, parent, _) in stats.items()
                   if comm == "postgres" and stats.get(parent, ("",))[0] != "postgres"}
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.split(b"\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            if b":" in line:
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
        if b"content-length" in headers:
            data = await self.reader.readexactly(int(headers[b"content-length"]))
        elif headers.get(b"transfer-encoding", b"").lower() == b"chunked":
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
    product = False
    inproc = False
    pg = False  # on PostgreSQL (+ Redis): the database side's CPU is measured too
    cwd = ROOT

    def __init__(self, workers: int, threads: int) -> None:
        self.workers, self.threads = workers, threads
        self.port = free_port()
        self.proc: subprocess.Popen | None = None
        self.key = ""
        self.env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.env.pop("THREADLESS_WEB_THREADS", None)
        if not threads:  # the product's default: 2 on SQLite, 8 on PostgreSQL
            threads = self.threads = 8 if isinstance(self, (FloorPostgres, Postgres)) else 2
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
        self.log = open(VAR / f"{self.name}.log", "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(self.command(), cwd=self.cwd, env=self.env, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.time() + 60
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
        raise RuntimeError(f"{self.name} did not start: see {VAR / (self.name + '.log')}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    async def memories(self, n: int) -> list[str]:
        """`n` memories of HISTORY messages each."""
        history = json.dumps({"messages": conversation(HISTORY)}).encode()
        conn = await Conn(self.port, self.key).open()
        out = []
        for i in range(n):
            if self.product:
                status, body = await conn.request("POST", "/v1/memories", json.dumps({"external_id": f"u{i}"}).encode())
                memory = json.loads(body)["id"]
                status, _ = await conn.request("POST", f"/v1/memories/{memory}/report", history)
            else:
                memory = f"m{i}"
                status, _ = await conn.request("POST", f"/load/{memory}", history)
            assert status in (200, 201, 202), status
            out.append(memory)
        conn.close()
        return out


class FloorStack(Stack):
    def __init__(self, workers: int, threads: int, db: str) -> None:
        super().__init__(workers, threads)
        self.env["FLOOR_DB"] = db

    def prepare(self) -> None:
        subprocess.run([sys.executable, "-c", "from bench.floor import setup; setup()"], cwd=ROOT, env=self.env,
                       check=True)

    def command(self) -> list[str]:
        return [sys.executable, "-m", "uvicorn", "bench.floor:app", "--host", "127.0.0.1", "--port", str(self.port),
                "--workers", str(self.workers), "--loop", "uvloop", "--http", "httptools", "--no-access-log",
                "--log-level", "warning"]


class FloorSqlite(FloorStack):
    name, label = "floor-sqlite", "floor (bare ASGI + sqlite3)"

    def __init__(self, workers: int, threads: int) -> None:
        db = VAR / "floor.sqlite3"
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
        super().__init__(workers, threads, str(db))


class FloorPostgres(FloorStack):
    name, label = "floor-pg", "floor (bare ASGI + psycopg)"
    pg = True

    def __init__(self, workers: int, threads: int) -> None:
        super().__init__(workers, threads, PG_URL)

    def prepare(self) -> None:
        fresh_pg_database()
        super().prepare()


class ProductStack(Stack):
    product = True
    inproc = True

    def manage(self, *args: str) -> str:
        return subprocess.run([sys.executable, "manage.py", *args], cwd=self.cwd, env=self.env, check=True,
                              capture_output=True, text=True).stdout

    def prepare(self) -> None:
        self.manage("migrate", "--noinput", "-v0")
        if "REDIS_URL" not in self.env:
            self.manage("createcachetable")
        project = json.loads(self.manage("create_project", "Load", "--json"))["id"]
        self.key = json.loads(self.manage("create_key", "--project", project, "--json"))["key"]

    def command(self) -> list[str]:
        return [sys.executable, "-m", "threadless_site.serve", "--port", str(self.port), "--workers", str(self.workers)]


class Embedded(ProductStack):
    name, label = "embedded", "Threadless, embedded default (SQLite)"

    def __init__(self, workers: int, threads: int) -> None:
        super().__init__(workers, threads)
        var = VAR / "embedded"
        shutil.rmtree(var, ignore_errors=True)
        var.mkdir(parents=True)
        for name in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"):
            self.env.pop(name, None)
        self.env.update({"THREADLESS_VAR_DIR": str(var), "THREADLESS_RATE_LIMIT_PER_MINUTE": "100000000"})


class Postgres(ProductStack):
    name, label = "postgres", "Threadless, PostgreSQL + Redis"
    pg = True

    def __init__(self, workers: int, threads: int) -> None:
        super().__init__(workers, threads)
        var = VAR / "postgres"
        shutil.rmtree(var, ignore_errors=True)
        var.mkdir(parents=True)
        self.env.update({"THREADLESS_VAR_DIR": str(var), "DATABASE_URL": PG_URL, "REDIS_URL": f"{REDIS}/{REDIS_DBS[0]}",
                         "CELERY_BROKER_URL": f"{REDIS}/{REDIS_DBS[1]}", "THREADLESS_CELERY_QUEUE": "load-bench",
                         "THREADLESS_RATE_LIMIT_PER_MINUTE": "100000000"})

    def prepare(self) -> None:
        fresh_pg_database()
        import redis

        for db in REDIS_DBS:
            redis.Redis.from_url(f"{REDIS}/{db}").flushdb()
        super().prepare()


def before_tree(into: str) -> tuple[Path, bool, str]:
    """The code before this work (git BENCH_BEFORE_REF, default the merge base with main),
    extracted with `git archive` into VAR/`into`: (its directory, has threadless-serve, label)."""
    ref = os.environ.get("BENCH_BEFORE_REF") or subprocess.run(
        ["git", "merge-base", "HEAD", "main"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    cwd = VAR / into
    shutil.rmtree(cwd, ignore_errors=True)
    cwd.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(cwd)], input=archive, check=True)
    # Code that has its own production server is served by it, in the same process model.
    served = (cwd / "threadless_site" / "serve.py").exists()
    how = "threadless-serve" if served else "1 uvicorn process"
    return cwd, served, f"main @{ref[:7]}, {how}"


class Before(Embedded):
    """The code before this work, served as it was: by its `threadless-serve` if it has one, else
    one plain uvicorn process (`before_tree`)."""

    name = "before"
    inproc = False

    def __init__(self, workers: int, threads: int) -> None:
        super().__init__(workers, threads)
        self.cwd, self.served, how = before_tree("before-src")
        self.label = f"before ({how})"

    def command(self) -> list[str]:
        if self.served:
            return super().command()
        return [sys.executable, "-m", "uvicorn", "threadless_site.asgi:application", "--host", "127.0.0.1",
                "--port", str(self.port), "--no-access-log", "--log-level", "warning"]


class BeforePostgres(Postgres):
    """`before` on PostgreSQL + Redis (the same database and Redis dbs as `postgres`, fresh)."""

    name = "before-pg"
    inproc = False

    def __init__(self, workers: int, threads: int) -> None:
        super().__init__(workers, threads)
        self.cwd, served, how = before_tree("before-pg-src")
        if not served:
            raise RuntimeError("before-pg needs a BENCH_BEFORE_REF with threadless-serve")
        self.label = f"before, PostgreSQL + Redis ({how})"


def fresh_pg_database() -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{PG_DB}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{PG_DB}"')


STACKS = {"floor-sqlite": FloorSqlite, "before": Before, "embedded": Embedded, "floor-pg": FloorPostgres,
          "before-pg": BeforePostgres,
          "postgres": Postgres}
FLOOR_OF = {"embedded": "floor-sqlite", "before": "floor-sqlite", "postgres": "floor-pg", "before-pg": "floor-pg"}


# --- phases ------------------------------------------------------------------------------------


async def turns(stack: Stack, memories: list[str], clients: int, seconds: float) -> dict:
    """`clients` connections doing turns (decorate + report) for `seconds`."""
    conns = [await Conn(stack.port, stack.key).open() for _ in range(clients)]
    latencies: list[float] = []
    decorates: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds

    async def one(conn: Conn, memory: str, c: int) -> None:
        nonlocal errors
        i = 0
        while time.perf_counter() < deadline:
            i += 1
            user = json.dumps({"messages": [{"role": "user", "content": f"client {c} question {i}: what next?"}]})
            reply = json.dumps({"messages": [{"role": "assistant", "content": f"answer {i} for client {c}."}]})
            start = time.perf_counter()
            status, _ = await conn.request("POST", stack.decorate_path(memory), user.encode())
            mid = time.perf_counter()
            status2, _ = await conn.request("POST", stack.report_path(memory), reply.encode())
            end = time.perf_counter()
            if status != 200 or status2 not in (200, 202):
                errors += 1
            latencies.append(end - start)
            decorates.append(mid - start)

    db = db_cpu() if stack.pg else {}
    started, cpu = time.perf_counter(), tree_cpu(stack.proc.pid)
    await asyncio.gather(*(one(conn, memories[i], i) for i, conn in enumerate(conns)))
    elapsed, cpu = time.perf_counter() - started, tree_cpu(stack.proc.pid) - cpu
    db_after = db_cpu() if stack.pg else {}
    for conn in conns:
        conn.close()
    ms = [x * 1000 for x in latencies]
    out = {"clients": clients, "turns": len(latencies), "turns_s": len(latencies) / elapsed,
           "cpu_ms": cpu * 1000 / max(1, len(latencies)),
           "p50": quantile(ms, 0.5), "p99": quantile(ms, 0.99), "errors": errors,
           "decorate_p50": quantile([x * 1000 for x in decorates], 0.5)}
    for side, key in (("postgres", "pg_cpu_ms"), ("redis", "redis_cpu_ms")):  # the database side's, per turn
        if db:
            out[key] = (db_after[side] - db[side]) * 1000 / max(1, len(latencies))
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


PROBE_CALLS = 60  # single-client decorates on a fresh memory, the first 10 not counted (bench.load_inproc too)


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
        *memories, probe_http, probe_inproc = asyncio.run(stack.memories(max(clients) + 2))
        asyncio.run(turns(stack, memories, min(4, max(clients)), 1.5))  # warm every worker
        out = {"label": stack.label, "threads": stack.threads, "turns": []}
        for n in clients:
            result = asyncio.run(turns(stack, memories, n, phase))
            log(f"{stack.name}: {n:>2} clients {result['turns_s']:.0f} turns/s p50 {result['p50']:.1f} "
                f"p99 {result['p99']:.1f} cpu/turn {result['cpu_ms']:.2f} ms errors {result['errors']}")
            out["turns"].append(result)
        probe = 16 if 16 in clients else max(clients)
        out["healthz"] = asyncio.run(requests(stack, lambda m: "/healthz", probe, phase / 2, memories))
        out["get"] = asyncio.run(requests(stack, stack.get_path, probe, phase / 2, memories))
        out["healthz_1"] = asyncio.run(requests(stack, lambda m: "/healthz", 1, phase / 3, memories))
        out["get_1"] = asyncio.run(requests(stack, stack.get_path, 1, phase / 3, memories))
        out["decorate_1"] = asyncio.run(decorate_probe(stack, probe_http))
        log(f"{stack.name}: decorate over HTTP, 1 client, fresh memory: p50 {out['decorate_1']:.2f} ms")
        out["memory"] = probe_inproc
        return out
    finally:
        stack.stop()


def in_process(stack: Stack, memory: str) -> dict:
    """decorate in process on the stack's own database, and the write counts, in a child."""
    done = subprocess.run([sys.executable, "-m", "bench.load_inproc", memory], cwd=ROOT, env=stack.env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        log(f"{stack.name}: in-process run failed:\n{done.stderr[-2000:]}")
        return {}
    return json.loads(done.stdout)


# --- the report --------------------------------------------------------------------------------


def mark(ok: bool) -> str:
    return "✅" if ok else "❌"


def table(results: dict) -> list[str]:
    lines = ["| stack | clients | turns/s | turn p50 / p99 (ms) | p99 ÷ p50 | server CPU per turn | PostgreSQL CPU "
             "per turn | Redis CPU per turn | errors | share of floor |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, res in results["stacks"].items():
        floor = results["stacks"].get(FLOOR_OF.get(name, ""), None)
        for row in res["turns"]:
            share = "—"
            if floor:
                base = next((r for r in floor["turns"] if r["clients"] == row["clients"]), None)
                if base and base["turns_s"]:
                    value = row["turns_s"] / base["turns_s"]
                    share = f"{value:.0%}" + (f" {mark(value >= TARGET_SHARE)}" if row["clients"] == 16 else "")
            tail = row["p99"] / row["p50"] if row["p50"] else float("nan")
            tail_text = f"{tail:.1f}×" + (f" {mark(tail <= TARGET_TAIL)}" if row["clients"] == 64 else "")
            cpu, pg, redis = (f"{row[key]:.2f} ms" if key in row else "—" for key in ("cpu_ms", "pg_cpu_ms", "redis_cpu_ms"))
            lines.append(f"| {res['label']} | {row['clients']} | {row['turns_s']:.0f} | {row['p50']:.1f} / "
                         f"{row['p99']:.1f} | {tail_text} | {cpu} | {pg} | {redis} | {row['errors']} | {share} |")
    return lines


def probes(results: dict) -> list[str]:
    lines = ["| stack | `/healthz` (16 clients) | GET memory (16 clients) | `/healthz` p50, 1 client | "
             "GET memory p50, 1 client |", "|---|---:|---:|---:|---:|"]
    for res in results["stacks"].values():
        lines.append(f"| {res['label']} | {res['healthz']['rps']:.0f}/s | {res['get']['rps']:.0f}/s | "
                     f"{res['healthz_1']['p50']:.2f} ms | {res['get_1']['p50']:.2f} ms |")
    return lines


def service_cpu(inproc: dict) -> str:
    cpu = inproc.get("cpu_ms")
    if not cpu:
        return "—"
    return f"{cpu['decorate'] + cpu['report']:.2f} ms ({cpu['decorate']:.2f} + {cpu['report']:.2f})"


def http_vs_inproc(results: dict) -> list[str]:
    lines = ["| stack | decorate over HTTP, 1 client (p50) | in process (p50) | difference | "
             "writes: decorate / report (beyond stored rows) | SQL statements: decorate / report | "
             "CPU of the service calls alone per turn |", "|---|---:|---:|---:|---:|---:|---:|"]
    for res in results["stacks"].values():
        inproc = res.get("inproc")
        if not inproc:
            continue
        http = res.get("decorate_1", float("nan"))
        diff = http - inproc["decorate_p50"]
        lines.append(f"| {res['label']} | {http:.2f} ms | {inproc['decorate_p50']:.2f} ms | "
                     f"+{diff:.2f} ms {mark(diff <= TARGET_HTTP_MS)} | {inproc['writes']['decorate']} / "
                     f"{inproc['writes']['report']} ({inproc['writes']['decorate_extra']} / "
                     f"{inproc['writes']['report_extra']}) | {inproc['writes']['decorate_statements']} / "
                     f"{inproc['writes']['report_statements']} | {service_cpu(inproc)} |")
    return lines


def before_after(results: dict) -> list[str]:
    stacks = results["stacks"]
    if "before" not in stacks or "embedded" not in stacks:
        return []
    lines = ["", "Before → after, embedded default, same run (turns/s; turn p50 / p99 ms):", "",
             "| clients | before | after | speed-up |", "|---:|---:|---:|---:|"]
    for old, new in zip(stacks["before"]["turns"], stacks["embedded"]["turns"], strict=False):
        lines.append(f"| {old['clients']} | {old['turns_s']:.0f} ({old['p50']:.0f} / {old['p99']:.0f}) | "
                     f"{new['turns_s']:.0f} ({new['p50']:.0f} / {new['p99']:.0f}) | "
                     f"{new['turns_s'] / old['turns_s']:.2f}× |")
    return lines


def chart(results: dict, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
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
        parts.append(f"{res['label']}: {row['cpu_ms']:.1f} ms of server CPU per turn against the floor's "
                     f"{base['cpu_ms']:.1f} ms; the two service calls alone (`memory_decorate` + `report_accept` in "
                     f"process) take {service:.1f} ms, so even a serving layer that cost nothing would reach about "
                     f"{base['cpu_ms'] / service:.0%} of the floor, and the serving layer (HTTP, Django, DRF, auth, "
                     f"limits, the memory lookup, the thread hand-off) costs the other "
                     f"{max(0.0, row['cpu_ms'] - service):.1f} ms")
    if not parts:
        return ""
    return ("Where the rest goes: at 16 clients every stack is CPU-bound on this 2-core machine (the load "
            "generator and other work share it), so turns/s follows CPU per turn. " + "; ".join(parts) + ". "
            "Where the serving layer costs more than the service calls, it is the larger half of what the 60 % "
            "target needs: spread over uvicorn's HTTP parsing, the thread hand-off, Django's request cycle and "
            "DRF's dispatch, the counter round trips and the memory lookup, with no single part left above "
            "~5 % of the server's samples (py-spy, see below). More threads do not help SQLite (one writer: "
            "the tail grows, throughput does not), so the embedded default runs 2 per process.")


def section(results: dict, charted: bool) -> str:
    info = results["machine"]
    head = [
        BEGIN,
        "## 8. Under load (`make bench-load`)",
        "",
        f"Generated by `make bench-load` on {info['date']}: {info['cpu']}, {info['cores']} cores, load "
        f"{info['load']} at the start, shared with other work. {results['workers']} server worker processes for "
        f"every stack (uvicorn, uvloop + httptools), threads per process: "
        + ", ".join(f"{n} {r.get('threads', results['threads'])}" for n, r in results["stacks"].items() if n != "before")
        + f"; {results['phase']:.0f} s per "
        f"phase. Each client is one keep-alive connection on its own memory of {HISTORY} messages; a turn = "
        "decorate one user message + report the reply. Rate limit on (counted, never reached); no Celery worker "
        "running (report's background work waits on the broker), so these are the web tier's numbers. The floor "
        "is a bare ASGI app (`bench/floor.py`) doing the decorate lower bound's SQL with the plain driver, in the "
        "same process model. Targets: turns/s at 16 clients ≥ 60 % of the floor's; p99 at 64 clients ≤ 3× p50; "
        "single-client decorate over HTTP ≤ in-process + 2 ms.",
        "",
        "What the serving path does since issue 17 (details in [deployment.md](deployment.md)): no request writes "
        "a row the whole project shares (rate limits and usage in Redis, or the embedded default's own counter "
        "file, flushed to `ApiCall` / `ProjectUsage` by a beat task); decorate updates the memory row once; "
        "`threadless-serve` runs one process per CPU, each with a thread pool for sync views; database "
        "connections are persistent on SQLite too (PostgreSQL: health-checked); each process keeps the key rows "
        "it looked up (revocation still holds from the next request on every process: a key generation in the "
        "counter store, read per request, on the API in the same round trip as the rate and plan counts); "
        "`threadless-serve` writes no access log unless asked (`--access-log`); sync views reach their thread through `threadless_site.syncviews`, "
        "one hand-off each way instead of a2wsgi's four waits. The `before` row is the code before this issue's "
        "second round (BENCH_BEFORE_REF), extracted with `git archive` and served as it was (its own "
        "`threadless-serve`, same processes and threads). *Server CPU per turn* is the CPU time of the server's processes (from /proc) over the turns "
        "they served: unlike turns/s it hardly moves with what else the machine runs. *PostgreSQL CPU per turn* is "
        "the same for the PostgreSQL processes working for the bench's database (its backends, plus the server's "
        "shared checkpointer / WAL writer / background writer); *Redis CPU per turn* for redis-server (shared with "
        "whatever else uses it: the floor's row, which uses no Redis, shows that background); — on SQLite "
        "(in process). The HTTP vs in-process "
        "row times both halves the same way: 50 decorates (after 10 warm-ups), each followed by its report, on "
        "a fresh memory of 200 messages.",
        "",
    ]
    body = table(results) + [""] + probes(results) + [""] + http_vs_inproc(results) + before_after(results)
    if charted:
        body += ["", "![Throughput and p99 vs clients](benchmarks-load.png)"]
    body += ["", where_the_rest_goes(results)]
    return "\n".join(head + body + ["", END]) + "\n"


def write_doc(text: str, doc: Path) -> None:
    old = doc.read_text() if doc.exists() else ""
    if BEGIN in old and END in old:
        new = old[:old.index(BEGIN)] + text.rstrip("\n") + old[old.index(END) + len(END):]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    doc.write_text(new)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--phase", type=float, default=6.0, help="seconds per phase")
    parser.add_argument("--clients", default="1,16,64")
    parser.add_argument("--stacks", default="floor-sqlite,before,embedded,floor-pg,postgres")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--threads", type=int, default=int(os.environ.get("THREADLESS_WEB_THREADS", "0")),
                        help="threads per process for every stack (default: each stack's own default)")
    parser.add_argument("--doc", default=str(DOCS / "benchmarks.md"))
    parser.add_argument("--no-doc", action="store_true")
    parser.add_argument("--from-json", default="", help="only rewrite the doc from a saved results.json")
    args = parser.parse_args()
    VAR.mkdir(parents=True, exist_ok=True)
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text())
        write_doc(section(results, chart(results, DOCS / "benchmarks-load.png")), Path(args.doc))
        return
    clients = [int(c) for c in args.clients.split(",")]
    results = {"machine": machine(), "workers": args.workers, "threads": args.threads, "phase": args.phase,
               "stacks": {}}
    started = time.time()
    for name in args.stacks.split(","):
        stack = STACKS[name](args.workers, args.threads)
        results["stacks"][name] = run_stack(stack, clients, args.phase)
        if stack.inproc:
            results["stacks"][name]["inproc"] = in_process(stack, results["stacks"][name]["memory"])
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
