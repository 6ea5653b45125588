"""Real processes for tests: a Threadless web server (uvicorn, or granian with several worker
processes as `make serve` runs it) and a Celery worker (solo, or prefork with pool processes).

Each `ThreadlessServer` gets its own var dir and database (a SQLite file on the embedded
default; a fresh PostgreSQL database under `make test-services`), so tests that talk HTTP to it
never share state with pytest-django's test database.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def services_mode() -> bool:
    return os.environ.get("THREADLESS_SERVICES") == "1"


def _drop_database(url: str) -> None:
    """Drop a database `_fresh_database_url` created (after its processes stopped)."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _fresh_database_url() -> str:
    base = os.environ.get("DATABASE_URL", "")
    if services_mode() and base.startswith("postgres"):
        import psycopg

        name = "tl_live_" + secrets.token_hex(4)
        admin = base.rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return base.rsplit("/", 1)[0] + "/" + name
    return ""


class ThreadlessServer:
    def __init__(
        self,
        *,
        worker: bool = False,
        env: dict | None = None,
        port: int | None = None,
        log_level: str = "warning",
        web_workers: int = 0,
        pool_processes: int = 0,
    ):
        self.log_level = log_level  # "info" writes uvicorn's access log to web.log
        self.web_workers = web_workers  # > 0: granian with this many worker processes (`make serve`)
        self.pool_processes = pool_processes  # > 0: Celery's prefork pool with this many processes
        self.var = Path(tempfile.mkdtemp(prefix="tl-live-"))
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.with_worker = worker
        self.extra_env = env or {}
        self.web: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None
        self.demo: dict = {}
        db = _fresh_database_url()
        self.created_database = db
        inherited = dict(os.environ)
        if not services_mode():
            inherited.pop("CELERY_BROKER_URL", None)
            inherited.pop("REDIS_URL", None)
        self.env = {
            **inherited,
            "THREADLESS_VAR_DIR": str(self.var),
            "DATABASE_URL": db or f"sqlite:///{self.var / 'threadless.sqlite3'}",
            "PYTHONUNBUFFERED": "1",
            "DJANGO_SETTINGS_MODULE": "threadless_site.settings",
            **self.extra_env,
        }
        if services_mode():
            # Servers share one Redis: each gets its own queue, or one server's worker would
            # take another's outbox ids (which mean other rows in its own database).
            self.env.setdefault("CELERY_BROKER_URL", "redis://127.0.0.1:6379/15")
            self.env.setdefault("THREADLESS_CELERY_QUEUE", "tl-live-" + secrets.token_hex(4))

    @property
    def key(self) -> str:
        return self.demo["key"]

    def manage(self, *args: str) -> str:
        out = subprocess.run(
            [str(BIN / "python"), "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=600,
        )  # a loaded 2-core machine is slow
        if out.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{out.stdout}\n{out.stderr}")
        return out.stdout

    def start(self) -> ThreadlessServer:
        try:
            self.manage("migrate", "--noinput", "-v0")
            self.demo = json.loads(self.manage("bootstrap_demo", "--json").strip().splitlines()[-1])
            self.start_web()
            if self.with_worker:
                self.start_worker()
        except BaseException:
            self.stop()  # no process, database or temp dir outlives a failed start
            raise
        return self

    def web_command(self) -> list[str]:
        if self.web_workers:  # as scripts/run.sh starts it under `make serve`
            return [
                str(BIN / "granian"),
                "--interface",
                "asgi",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--workers",
                str(self.web_workers),
                "--loop",
                "uvloop",
                "--http",
                "1",
                "--no-ws",
                "--workers-kill-timeout",
                "20",
                "threadless_site.asgi:application",
            ]
        return [
            str(BIN / "uvicorn"),
            "threadless_site.asgi:application",
            "--port",
            str(self.port),
            "--host",
            "127.0.0.1",
            "--timeout-graceful-shutdown",
            "20",
            "--log-level",
            self.log_level,
        ]

    def start_web(self) -> None:
        self.web_log = open(self.var / "web.log", "ab")
        self.web = subprocess.Popen(
            self.web_command(),
            cwd=ROOT,
            env=self.env,
            stdout=self.web_log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.time() + 90  # generous: a loaded 2-core CI machine can take half a minute to import
        while time.time() < deadline:
            try:
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.web.poll() is not None:
                raise RuntimeError("web server exited:\n" + (self.var / "web.log").read_text())
            time.sleep(0.1)
        raise RuntimeError("web server did not start:\n" + (self.var / "web.log").read_text())

    def start_worker(self) -> None:
        self.worker_log = open(self.var / "worker.log", "ab")
        self.worker = subprocess.Popen(
            [
                str(BIN / "celery"),
                "-A",
                "threadless_site",
                "worker",
                "--loglevel=INFO",
                f"--concurrency={self.pool_processes or 1}",
                "--pool=prefork" if self.pool_processes else "--pool=solo",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=self.worker_log,
            stderr=subprocess.STDOUT,
        )

    def stop_worker(self, sig: int = signal.SIGTERM) -> None:
        if self.worker and self.worker.poll() is None:
            self.worker.send_signal(sig)
            try:
                self.worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.worker.kill()
                self.worker.wait()
        self.worker = None

    def stop_web(self, sig: int = signal.SIGTERM) -> None:
        if self.web and self.web.poll() is None:
            self.web.send_signal(sig)
            try:
                self.web.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.web.kill()
                self.web.wait()
        self.web = None

    def stop(self) -> None:
        self.stop_worker()
        self.stop_web()
        if self.created_database:
            _drop_database(self.created_database)
            self.created_database = ""
        shutil.rmtree(self.var, ignore_errors=True)

    def client(self, key: str | None = None) -> httpx.Client:
        return httpx.Client(
            base_url=self.url + "/v1", headers={"Authorization": f"Bearer {key or self.key}"}, timeout=30
        )

    def __enter__(self) -> ThreadlessServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
