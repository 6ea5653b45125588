"""The stacks the load bench measures, and how each is started and stopped: the floors (a bare
ASGI app doing decorate's lower bound with the plain driver, on SQLite or PostgreSQL), the product
on its embedded default or on PostgreSQL + Redis, and `before` (an older tree of the product), each
under one of the web servers in SERVERS (`make serve`'s granian unless told). A stack gets a port
of its own (BENCH_LOAD_PORTS when set), files under VAR and, on PostgreSQL, a fresh database; it
never sends the load itself (bench.load.client does)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from bench.common import ROOT
from bench.load.config import PG_ADMIN, PG_DB, REDIS, REDIS_DBS, VAR

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

    def command(self) -> list[str]:
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


def before_tree(into: str) -> tuple[Path, str]:
    """The code before this work (git BENCH_BEFORE_REF, default the merge base with main),
    extracted with `git archive` into VAR/`into`: (its directory, its label)."""
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
    return cwd, f"main @{ref[:7]}"


class Before(Embedded):
    """The code before this work (`before_tree`), served by the same server as the product."""

    name = "before"
    inproc = False

    def __init__(self, workers: int, threads: int, slot: str = "") -> None:
        super().__init__(workers, threads, slot)
        self.cwd, ref = before_tree("before-src")
        self.label = f"before ({ref})"


class BeforePostgres(Postgres):
    """`before` on PostgreSQL + Redis (the same database and Redis dbs as `postgres`, fresh)."""

    name = "before-pg"
    inproc = False

    def __init__(self, workers: int, threads: int, slot: str = "") -> None:
        super().__init__(workers, threads, slot)
        self.cwd, ref = before_tree("before-pg-src")
        self.label = f"before, PostgreSQL + Redis ({ref})"


def fresh_pg_database(name: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


BIN = Path(sys.executable).parent
# name → (label, interface). Each runs `workers` processes; a WSGI server runs `threads` threads in each
# (the product's THREADLESS_WEB_THREADS), an ASGI one the app as it is (its sync views on that many threads).
SERVERS = {
    "granian-asgi": ("granian, ASGI", "asgi"),
    "granian-wsgi": ("granian, WSGI", "wsgi"),
    "gunicorn-uvicorn": ("gunicorn + uvicorn-worker, ASGI", "asgi"),
    "gunicorn-gthread": ("gunicorn gthread, WSGI", "wsgi"),
}


def server_command(
    server: str, asgi_app: str, wsgi_app: str, port: int, workers: int, threads: int
) -> list[str]:
    """The command line of `server` serving the app on 127.0.0.1:`port`: `workers` processes, no access
    log, uvloop where the server takes an event loop, a backlog of 2048."""
    host, interface = "127.0.0.1", SERVERS[server][1]
    app = asgi_app if interface == "asgi" else wsgi_app
    if not app:
        raise ValueError(f"{server} serves WSGI: this stack has no WSGI app")
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
    # No access log under any server (settings.LOGGING gives uvicorn's one a handler unless told).
    stack.env["THREADLESS_ACCESS_LOG"] = "0"
    return stack


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
# The products' shares measured by interleaved blocks (the default run's 16-client share): product → floor.
INTERLEAVE = {"embedded": "floor-sqlite", "postgres": "floor-pg"}
