"""`make reliability`: load, faults under load, and fuzzing, written to docs/reliability.md.

It runs its own PostgreSQL cluster and its own Redis on free loopback ports (so restarting them
disturbs nobody else's tests), uvicorn with several workers and a Celery worker with beat, then:

1. load: locust, headless, mixed create / decorate / report / read, for --load-seconds;
2. faults, each under load and each ending with a count check (messages stored == messages
   acknowledged, every outbox row processed): the worker killed with SIGKILL mid-job and
   restarted; the broker (Redis) stopped for --broker-down seconds then started; PostgreSQL
   restarted; a web process sent SIGTERM mid-turn (one uvicorn worker, then the whole server,
   restarted) while agent turns wait on a slow local HTTP stub: every turn must end READY, ERROR
   or EXECUTION_INTERRUPTED, an interrupted turn keeps only its input committed, and a rerun
   recovers it. Python SDK clients (timeout 2 s) run decorate → report throughout the faults:
   turns, degraded turns and exceptions raised to the caller (must be 0) are counted;
3. fuzzing: schemathesis against /v1/openapi.json with a real key;
4. the embedded default (bench/embedded_faults.py): SQLite and the `threadless-fs://` broker with a
   supervised worker, under two publishing web processes, with the worker killed by SIGKILL
   mid-burst, and a broker soak (N publishes from two processes, each processed exactly once).

    python -m bench.reliability [--users 16] [--load-seconds 45] [--fault-seconds 30]
                                [--broker-down 10] [--fuzz-examples 12] [--web-workers 3]
                                [--only embedded] [--embedded-seconds 20] [--soak-messages 20000]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench import embedded_faults
from bench.common import DOCS, ROOT, VAR, machine
from bench.django_setup import SETTINGS
from bench.faultkit import SLOW_SECONDS, SdkClients, SlowStub, SlowTalkers

sys.path.insert(0, str(ROOT))
from harness.servers import free_port  # noqa: E402

BIN = Path(sys.executable).parent
PG_BIN = (
    Path("/usr/lib/postgresql")
    / (sorted(os.listdir("/usr/lib/postgresql"))[-1] if Path("/usr/lib/postgresql").exists() else "15")
    / "bin"
)


def log(*parts) -> None:
    print("[reliability]", *parts, file=sys.stderr, flush=True)


def wait_for(check, timeout: float, what: str) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if check():
                return
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.2)
    raise RuntimeError(f"timed out waiting for {what}")


class Stack:
    """Private PostgreSQL + Redis + uvicorn (N workers) + Celery worker with beat, on loopback."""

    def __init__(self, *, web_workers: int) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="tl-reliability-"))
        self.pg_dir = self.root / "pg"
        self.pg_port, self.redis_port, self.web_port = free_port(), free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.web_port}"
        self.web_workers = web_workers
        self.redis: subprocess.Popen | None = None
        self.web: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None
        self.key = ""
        self.agent_id = ""
        self.slow_agent_id = ""
        self.db_url = f"postgres://root@127.0.0.1:{self.pg_port}/threadless"
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": SETTINGS,
            "THREADLESS_VAR_DIR": str(self.root / "var"),
            "DATABASE_URL": self.db_url,
            "CELERY_BROKER_URL": f"redis://127.0.0.1:{self.redis_port}/0",
            "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/1",
            "THREADLESS_RATE_LIMIT_PER_MINUTE": "0",
            "THREADLESS_EGRESS_ALLOW": "127.0.0.1",
            "THREADLESS_OUTBOX_STALE_SECONDS": "15",
            "THREADLESS_OUTBOX_SWEEP_SECONDS": "5",
            "PYTHONUNBUFFERED": "1",
            "LOG_LEVEL": "WARNING",
        }

    # PostgreSQL --------------------------------------------------------------------------------
    def _pg(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["runuser", "-u", "postgres", "--", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=check,
        )

    def start_pg(self) -> None:
        self.pg_dir.mkdir(parents=True)
        shutil.chown(self.root, "postgres")
        shutil.chown(self.pg_dir, "postgres")
        self._pg(str(PG_BIN / "initdb"), "-D", str(self.pg_dir), "-A", "trust", "-U", "root", "--no-sync")
        self.pg_ctl("start")
        subprocess.run(
            [
                "psql",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.pg_port),
                "-d",
                "postgres",
                "-qc",
                "CREATE DATABASE threadless",
            ],
            check=True,
            capture_output=True,
            timeout=60,
        )

    def pg_ctl(self, action: str) -> None:
        opts = f"-p {self.pg_port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.pg_dir}"
        self._pg(
            str(PG_BIN / "pg_ctl"),
            "-D",
            str(self.pg_dir),
            "-l",
            str(self.pg_dir / "log"),
            "-m",
            "fast",
            "-w",
            "-o",
            opts,
            action,
        )

    def sql(self, query: str) -> list[tuple]:
        import psycopg

        with psycopg.connect(self.db_url, autocommit=True, connect_timeout=5) as conn:
            return conn.execute(query).fetchall()

    # Redis -------------------------------------------------------------------------------------
    def start_redis(self) -> None:
        self.redis = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.redis_port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.root),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for(
            lambda: (
                subprocess.run(
                    ["redis-cli", "-p", str(self.redis_port), "ping"], capture_output=True, text=True
                ).stdout.strip()
                == "PONG"
            ),
            20,
            "redis",
        )

    def stop_redis(self) -> None:
        if self.redis and self.redis.poll() is None:
            self.redis.terminate()
            self.redis.wait(timeout=20)
        self.redis = None

    # Threadless --------------------------------------------------------------------------------
    def manage(self, *args: str) -> str:
        out = subprocess.run(
            [str(BIN / "python"), "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if out.returncode != 0:
            raise RuntimeError(f"manage.py {args} failed: {out.stderr[-2000:]}")
        return out.stdout

    def start_web(self) -> None:
        self.web = subprocess.Popen(
            [
                str(BIN / "uvicorn"),
                "threadless_site.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.web_port),
                "--workers",
                str(self.web_workers),
                "--log-level",
                "warning",
                "--timeout-graceful-shutdown",
                "20",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=open(self.root / "web.log", "ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        import httpx

        wait_for(lambda: httpx.get(self.url + "/healthz", timeout=2).status_code == 200, 90, "web server")

    def start_worker(self) -> None:
        self.worker = subprocess.Popen(
            [
                str(BIN / "celery"),
                "-A",
                "threadless_site",
                "worker",
                "-B",
                "--concurrency=2",
                "--loglevel=WARNING",
                "--without-gossip",
                "--without-mingle",
                "-s",
                str(self.root / "beat-schedule"),
            ],
            cwd=ROOT,
            env=self.env,
            stdout=open(self.root / "worker.log", "ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def web_worker_pids(self) -> list[int]:
        """uvicorn's worker processes (children of the supervisor spawned by multiprocessing)."""
        pids = []
        if not self.web:
            return pids
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
                cmd = (proc / "cmdline").read_bytes()
            except (OSError, IndexError, ValueError):
                continue
            if ppid == self.web.pid and b"spawn_main" in cmd:
                pids.append(int(proc.name))
        return sorted(pids)

    def kill_worker(self) -> None:
        """SIGKILL the worker's whole process group (main process, pool children, beat)."""
        if self.worker and self.worker.poll() is None:
            os.killpg(self.worker.pid, signal.SIGKILL)
            self.worker.wait(timeout=20)
        self.worker = None

    def stop_worker(self) -> None:
        if self.worker and self.worker.poll() is None:
            os.killpg(self.worker.pid, signal.SIGTERM)
            try:
                self.worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.worker.pid, signal.SIGKILL)
                self.worker.wait()
        self.worker = None

    def stop_web(self) -> None:
        if self.web and self.web.poll() is None:
            os.killpg(self.web.pid, signal.SIGTERM)
            try:
                self.web.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.web.pid, signal.SIGKILL)
                self.web.wait()
        self.web = None

    def start(self) -> None:
        log("starting private PostgreSQL and Redis")
        self.start_pg()
        self.start_redis()
        self.manage("migrate", "--noinput", "-v0")
        self.key = json.loads(self.manage("bootstrap_demo", "--json").strip().splitlines()[-1])["key"]
        log(f"starting uvicorn ({self.web_workers} workers) and a Celery worker with beat")
        self.start_web()
        self.start_worker()
        self.agent_id = self.create_agent()
        self.stub = SlowStub()
        self.slow_agent_id = self.create_agent(
            "Slow agent",
            [
                {
                    "id": "lookup",
                    "type": "http_call",
                    "request": {"url": self.stub.url + "/slow", "timeoutMs": 20000},
                },
                {"id": "llm", "type": "llm", "provider": "demo"},
            ],
        )

    def stop(self) -> None:
        if getattr(self, "stub", None):
            self.stub.close()
        self.stop_worker()
        self.stop_web()
        self.stop_redis()
        if self.pg_dir.exists():
            self._pg(str(PG_BIN / "pg_ctl"), "-D", str(self.pg_dir), "-m", "immediate", "stop", check=False)
        shutil.rmtree(self.root, ignore_errors=True)

    # Counts ------------------------------------------------------------------------------------
    def stored_messages(self) -> int:
        """Messages in locust's memories (decorate + report traffic): not an agent conversation's,
        not the SDK clients' (they are counted on their own)."""
        return self.sql(
            "SELECT count(*) FROM memories_entry WHERE kind = 'message' AND memory_id NOT IN "
            "(SELECT memory_id FROM chat_conversation) AND memory_id NOT IN "
            "(SELECT id FROM memories_memory WHERE metadata::jsonb ? 'sdk')"
        )[0][0]

    def stored_say_inputs(self) -> int:
        return self.sql(
            "SELECT count(*) FROM memories_entry WHERE kind = 'message' AND role = 'user' AND memory_id IN "
            f"(SELECT memory_id FROM chat_conversation WHERE agent_id = '{self.agent_id}')"
        )[0][0]

    def create_agent(self, name: str = "Reliability agent", workflow: list | None = None) -> str:
        import httpx

        r = httpx.post(
            self.url + "/v1/agents",
            headers={"Authorization": f"Bearer {self.key}"},
            timeout=60,
            json={
                "name": name,
                "config": {"workflow": workflow or [{"id": "llm", "type": "llm", "provider": "demo"}]},
            },
        )
        r.raise_for_status()
        return r.json()["id"]

    def slow_turns(self) -> dict:
        """The slow agent's turns by state (IN_PROGRESS split by live / expired lease), and the
        entries of interrupted turns other than the user input: committed (must be 0) and not."""
        agent = self.slow_agent_id
        rows = self.sql(
            "SELECT t.state, coalesce(t.lease_expires_at < now(), false), count(*) FROM memories_turn t "
            f"JOIN chat_conversation c ON c.memory_id = t.memory_id WHERE c.agent_id = '{agent}' GROUP BY 1, "
            "2"
        )
        states: dict[str, int] = {}
        for state, expired, n in rows:
            name = (
                state
                if state != "IN_PROGRESS"
                else ("IN_PROGRESS (lease expired)" if expired else "IN_PROGRESS")
            )
            states[name] = states.get(name, 0) + n
        interrupted = (
            "(t.state = 'EXECUTION_INTERRUPTED' OR (t.state = 'IN_PROGRESS' AND t.lease_expires_at < now()))"
        )
        committed, uncommitted = self.sql(
            "SELECT count(*) FILTER (WHERE e.committed), count(*) FILTER (WHERE NOT e.committed) FROM "
            "memories_entry e JOIN memories_turn t ON t.memory_id = e.memory_id AND t.number = e.turn "
            f"JOIN chat_conversation c ON c.memory_id = t.memory_id WHERE c.agent_id = '{agent}' AND "
            f"{interrupted} AND NOT (e.kind = 'message' AND e.role = 'user')"
        )[0]
        to_rerun = [
            r[0]
            for r in self.sql(
                "SELECT c.id FROM chat_conversation c JOIN memories_turn t ON t.memory_id = c.memory_id "
                f"WHERE c.agent_id = '{agent}' AND t.number = (SELECT max(number) FROM memories_turn WHERE "
                f"memory_id = c.memory_id) AND (t.state = 'ERROR' OR {interrupted})"
            )
        ]
        return {
            "states": states,
            "committed_after_interrupt": committed,
            "uncommitted_after_interrupt": uncommitted,
            "to_rerun": to_rerun,
        }

    def outbox(self) -> dict:
        total, pending, retried = self.sql(
            "SELECT count(*), count(*) FILTER (WHERE processed_at IS NULL), count(*) FILTER (WHERE attempts "
            "> 1) FROM memories_outbox"
        )[0]
        return {"rows": total, "pending": pending, "attempts_gt_1": retried}

    def wait_outbox_drained(self, timeout: float) -> float:
        started = time.time()
        deadline = started + timeout
        while time.time() < deadline:
            try:
                if self.outbox()["pending"] == 0:
                    return time.time() - started
            except Exception:  # noqa: BLE001 - the database may be restarting
                pass
            time.sleep(1)
        return -1


def run_locust(stack: Stack, *, users: int, seconds: int, tag: str, during=None) -> dict:
    """A headless locust run; `during(elapsed)` is called about every second to inject faults."""
    out = VAR / "reliability"
    out.mkdir(parents=True, exist_ok=True)
    prefix = out / tag
    counts_file = out / f"{tag}-counts.json"
    counts_file.unlink(missing_ok=True)
    env = {
        **os.environ,
        "THREADLESS_KEY": stack.key,
        "LOCUST_COUNTS": str(counts_file),
        "LOCUST_RUN": tag,
        "THREADLESS_AGENT": stack.agent_id,
    }
    before = stack.stored_messages()
    says_before = stack.stored_say_inputs()
    cmd = [
        str(BIN / "locust"),
        "-f",
        str(ROOT / "bench" / "locustfile.py"),
        "--headless",
        "-u",
        str(users),
        "-r",
        str(max(1, users // 2)),
        "-t",
        f"{seconds}s",
        "--host",
        stack.url,
        "--csv",
        str(prefix),
        "--only-summary",
        "--stop-timeout",
        "10",
        "--loglevel",
        "WARNING",
    ]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=open(out / f"{tag}.log", "wb"), stderr=subprocess.STDOUT
    )
    started = time.time()
    events: list[str] = []
    while proc.poll() is None:
        if during is not None:
            at = time.time() - started  # when the fault was injected (the callback may block a while)
            note = during(at)
            if note:
                events.append(f"t={at:.0f}s {note}")
        time.sleep(0.5)
        if time.time() - started > seconds + 120:
            proc.kill()
            events.append("locust did not stop: killed")
            break
    stats = parse_stats(prefix)
    counts = json.loads(counts_file.read_text()) if counts_file.exists() else {}
    return {
        "tag": tag,
        "stats": stats,
        "counts": counts,
        "events": events,
        "stored_before": before,
        "says_before": says_before,
    }


def parse_stats(prefix: Path) -> dict:
    path = Path(f"{prefix}_stats.csv")
    if not path.exists():
        return {}
    rows = {}
    with path.open() as fh:
        for row in csv.DictReader(fh):
            rows[row["Name"]] = {
                "requests": int(row["Request Count"]),
                "failures": int(row["Failure Count"]),
                "median": float(row["Median Response Time"] or 0),
                "p99": float(row.get("99%") or 0),
                "rps": float(row["Requests/s"] or 0),
            }
    return rows


def settle(stack: Stack, result: dict, *, drain_timeout: float = 90) -> dict:
    """After a phase: wait for the outbox to drain, then count."""
    drained = stack.wait_outbox_drained(drain_timeout)
    stored = stack.stored_messages() - result["stored_before"]
    acked = result["counts"].get("acked_messages", -1)
    say_stored = stack.stored_say_inputs() - result["says_before"]
    say_ok = result["counts"].get("say_ok", 0)
    say_failed = result["stats"].get("say", {}).get("failures", 0)
    # A say refused mid-turn (503 while PostgreSQL restarts) may have stored its input before the
    # failure: then stored may exceed the 200s by at most the failed says, never fall below them.
    say_check = say_stored == say_ok if say_failed == 0 else say_ok <= say_stored <= say_ok + say_failed
    # Nothing acknowledged may be lost: stored >= acknowledged. A request that failed after its
    # transaction committed (the database went away before the answer) may add to the store
    # without an acknowledgement: at most one message per failed decorate/report.
    failed_writes = sum(result["stats"].get(n, {}).get("failures", 0) for n in ("decorate", "report"))
    write_check = stored == acked if failed_writes == 0 else acked <= stored <= acked + failed_writes
    result.update(
        {
            "stored": stored,
            "acked": acked,
            "drained_s": drained,
            "outbox": stack.outbox(),
            "say_stored": say_stored,
            "say_ok": say_ok,
            "failed_writes": failed_writes,
            "ok": write_check and drained >= 0 and say_check,
        }
    )
    log(
        f"{result['tag']}: acknowledged {acked}, stored {stored}; says {say_ok} ok, inputs stored "
        f"{say_stored}; outbox {result['outbox']}, drained in {drained:.0f}s"
    )
    return result


def phases(stack: Stack, args, extra: dict) -> list[dict]:
    results = []
    log(f"load: {args.users} users for {args.load_seconds}s")
    results.append(settle(stack, run_locust(stack, users=args.users, seconds=args.load_seconds, tag="load")))

    sdk = SdkClients(stack.url, stack.key, args.sdk_threads, timeout=2.0)
    extra["sdk"] = sdk.counts
    sdk.start()
    try:
        results += fault_phases(stack, args, sdk, extra)
    finally:
        sdk.phase = "after"
        sdk.join()
    return results


def fault_phases(stack: Stack, args, sdk: SdkClients, extra: dict) -> list[dict]:
    results = []

    def settled(run: dict) -> dict:
        sdk.paused.set()  # the SDK clients rest while the run waits for the outbox and counts
        try:
            return settle(stack, run)
        finally:
            sdk.paused.clear()

    # Worker SIGKILL mid-job, restarted 3 s later.
    state = {"done": False}

    def kill_worker(t: float):
        if not state["done"] and t >= args.fault_seconds / 3:
            state["done"] = True
            stack.kill_worker()
            time.sleep(3)
            stack.start_worker()
            return "worker process group killed with SIGKILL, restarted 3 s later"
        return None

    log("fault: worker kill -9")
    sdk.phase = "worker-kill"
    results.append(
        settled(
            run_locust(
                stack, users=args.users, seconds=args.fault_seconds, tag="worker-kill", during=kill_worker
            )
        )
    )

    # Broker stopped then started (Redis holds no data across the restart: queued tasks are lost,
    # the outbox sweep must re-queue them).
    state = {"stopped": None, "started": False}

    def broker_outage(t: float):
        if state["stopped"] is None and t >= args.fault_seconds / 4:
            state["stopped"] = t
            stack.stop_redis()
            return f"broker (Redis) stopped for {args.broker_down}s"
        if state["stopped"] is not None and not state["started"] and t >= state["stopped"] + args.broker_down:
            state["started"] = True
            stack.start_redis()
            return "broker started (empty: everything queued in it was lost)"
        return None

    log("fault: broker outage")
    sdk.phase = "broker-outage"
    # The phase outlasts the outage, so traffic runs before, during and after it.
    broker_seconds = max(args.fault_seconds, args.fault_seconds // 4 + args.broker_down + 10)
    results.append(
        settled(
            run_locust(
                stack, users=args.users, seconds=broker_seconds, tag="broker-outage", during=broker_outage
            )
        )
    )

    state = {"done": False}

    def pg_restart(t: float):
        if not state["done"] and t >= args.fault_seconds / 3:
            state["done"] = True
            started = time.time()
            stack.pg_ctl("restart")
            return f"PostgreSQL restarted (fast shutdown, {time.time() - started:.1f}s)"
        return None

    log("fault: PostgreSQL restart")
    sdk.phase = "pg-restart"
    results.append(
        settled(
            run_locust(
                stack, users=args.users, seconds=args.fault_seconds, tag="pg-restart", during=pg_restart
            )
        )
    )

    # A web process sent SIGTERM mid-turn: first one uvicorn worker (the supervisor starts a new
    # one), then the whole server (restarted), while agent turns wait on the slow stub.
    state = {"one": False, "all": False}

    def web_sigterm(t: float):
        if not state["one"] and t >= args.fault_seconds / 4:
            state["one"] = True
            pids = stack.web_worker_pids()
            if not pids:
                return "no uvicorn worker found to signal"
            os.kill(pids[0], signal.SIGTERM)
            return f"SIGTERM to one uvicorn worker (pid {pids[0]} of {len(pids)})"
        if state["one"] and not state["all"] and t >= args.fault_seconds * 0.6:
            state["all"] = True
            began = time.time()
            sdk.phase = "web-sigterm (server down)"
            stack.stop_web()
            stopped = time.time() - began
            stack.start_web()
            sdk.phase = "web-sigterm"
            return (
                f"SIGTERM to the whole uvicorn (supervisor and workers): stopped after {stopped:.1f}s, "
                f"serving again {time.time() - began:.1f}s after the signal"
            )
        return None

    log("fault: web SIGTERM mid-turn")
    sdk.phase = "web-sigterm"
    talkers = SlowTalkers(stack.url, stack.key, stack.slow_agent_id, args.slow_talkers)
    talkers.start()
    try:
        run = run_locust(
            stack, users=args.users, seconds=args.fault_seconds, tag="web-sigterm", during=web_sigterm
        )
    finally:
        talkers.join()
    results.append(settled(run))
    sdk.paused.set()
    try:
        extra["web_sigterm"] = check_turns(stack, talkers)
    finally:
        sdk.paused.clear()
    return results


def check_turns(stack: Stack, talkers: SlowTalkers) -> dict:
    """After the web SIGTERM phase: no turn left IN_PROGRESS once leases expire, nothing an
    interrupted turn wrote (but its input) committed, and a rerun of every interrupted turn."""
    import httpx

    deadline = time.time() + 45
    before = stack.slow_turns()
    while before["states"].get("IN_PROGRESS") and time.time() < deadline:
        time.sleep(2)
        before = stack.slow_turns()
    reruns: dict[str, int] = {}
    headers = {"Authorization": f"Bearer {stack.key}"}

    def rerun(conversation: str) -> str:
        try:
            r = httpx.post(
                f"{stack.url}/v1/conversations/{conversation}/rerun", headers=headers, json={}, timeout=60
            )
            return r.json()["conversationState"] if r.status_code == 200 else f"HTTP {r.status_code}"
        except Exception as exc:  # noqa: BLE001 - reported
            return type(exc).__name__

    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as pool:
        for outcome in pool.map(rerun, before["to_rerun"]):
            reruns[outcome] = reruns.get(outcome, 0) + 1
    after = stack.slow_turns()
    answered = dict(talkers.states)
    ok = (
        not before["states"].get("IN_PROGRESS")
        and before["committed_after_interrupt"] == 0
        and after["committed_after_interrupt"] == 0
        and not after["to_rerun"]
        and set(reruns) <= {"READY"}
    )
    result = {
        "answered": answered,
        "failed_requests": talkers.failed_requests,
        "conversations": len(talkers.conversations),
        "before": {k: v for k, v in before.items() if k != "to_rerun"},
        "rerun": len(before["to_rerun"]),
        "rerun_outcomes": reruns,
        "after": {k: v for k, v in after.items() if k != "to_rerun"},
        "ok": ok,
    }
    log(f"web-sigterm turns: {result}")
    return result


def write_doc(
    info: dict, results: list[dict], fuzz_result, args, started: float, extra: dict | None = None
) -> None:
    extra = extra or {}
    lines = [
        "# Reliability: load, faults and fuzzing",
        "",
        "Generated by `make reliability` (`python -m bench.reliability`); rerun it to refresh this page.",
        f"Total run time {time.time() - started:.0f} s." if started else "",
        "",
        f"* Date: {info['date']}",
        f"* Machine: {info['cpu']}, {info['cores']} cores, {info['memory']} RAM, load average {info['load']} "
        "at the start (shared with other jobs: absolute throughput is the machine's, not the service's "
        "ceiling)",
        f"* Python {info['python']}; PostgreSQL {info['postgresql']} (a private cluster started for the "
        f"run); Redis {info['redis']} (a private server); locust {info['packages']['locust']}; "
        f"schemathesis {info['packages']['schemathesis']}",
        f"* Stack: uvicorn with {args.web_workers} worker processes on PostgreSQL + Redis (broker and "
        "cache), one Celery worker (prefork, concurrency 2) with beat (outbox sweep every 5 s, claims stale "
        "after 15 s); rate limit off; all traffic on 127.0.0.1.",
        f"* Load: locust headless, {args.users} users; each user creates a memory, then runs turns (decorate "
        "the user's message, then report the reply) with the odd read and a new memory now and then, and "
        "talks to an agent on the `demo` model (JSON say) in its own conversation.",
        "",
        "## Load and faults",
        "",
        "Each phase ends with a count check: the messages stored equal the messages the server acknowledged "
        "(200 decorate, 202 report), every say answered 200 stored its input once, and every outbox row was "
        "processed; whether the SIGKILL caught a job mid-flight shows in the re-run count (the worker "
        "re-runs rows whose claim went stale, so `attempts > 1` counts re-runs after a crash; each step is "
        "idempotent).",
        "",
        "| phase | seconds | requests | req/s | failures | p50 ms | p99 ms | acknowledged msgs | stored msgs "
        "| says answered / inputs stored | outbox rows (pending, re-run) | drained in | check |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|:---:|",
    ]
    for r in results:
        agg = r["stats"].get("Aggregated", {})
        seconds = args.load_seconds if r["tag"] == "load" else args.fault_seconds
        ob = r["outbox"]
        lines.append(
            f"| {r['tag']} | {seconds} | {agg.get('requests', 0):,} | {agg.get('rps', 0):.0f} | "
            f"{agg.get('failures', 0)} | {agg.get('median', 0):.0f} | {agg.get('p99', 0):.0f} | "
            f"{r['acked']:,} | {r['stored']:,} | {r['say_ok']:,} / {r['say_stored']:,} | {ob['rows']:,} "
            f"({ob['pending']}, {ob['attempts_gt_1']}) | {r['drained_s']:.0f} s | "
            f"{'✅' if r['ok'] else '❌'} |"
        )
    lines += ["", "Per endpoint (median / p99 ms, failures):", ""]
    names = ("create", "decorate", "report", "get memory", "say")
    lines += ["| phase | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for r in results:
        cells = []
        for name in names:
            s = r["stats"].get(name)
            cells.append(
                f"{s['median']:.0f} / {s['p99']:.0f}, {s['failures']} failed of {s['requests']:,}"
                if s
                else "—"
            )
        lines.append(f"| {r['tag']} | " + " | ".join(cells) + " |")
    lines += ["", "What happened in each fault phase:", ""]
    for r in results:
        for event in r["events"]:
            lines.append(f"* **{r['tag']}**: {event}")
    lines += [
        "",
        "Failures during a fault are requests the server refused while a dependency was down (503 "
        "`unavailable` while PostgreSQL restarts; connection refused while the whole web server is down in "
        "`web-sigterm`, where locust's users retry at once, hence the high request count and the 3 ms "
        "median) — the client is told, and nothing it was told was stored is "
        "lost (stored ≥ acknowledged). When stored exceeds acknowledged, a write committed but its answer "
        "failed (the database went away between the commit and the bookkeeping after it, e.g. the usage "
        "counter): the client saw an error for a message that is in fact stored, so a retry without an "
        "`Idempotency-Key` stores it twice (decorate and report take one; the SDKs pass `idempotency_key`). "
        "A broker outage costs no request at all: the outbox row is written in the report's own transaction "
        "and the sweep re-queues it once the broker is back.",
        "",
    ]
    lines += web_sigterm_section(extra.get("web_sigterm"), args)
    lines += sdk_section(extra.get("sdk"), args)
    lines += embedded_faults.section(extra.get("embedded"))
    lines += [
        "## Fuzzing",
        "",
    ]
    if fuzz_result is None:
        lines.append("Not run.")
    else:
        statuses = ", ".join(f"{k}: {v}" for k, v in sorted(fuzz_result.statuses.items()))
        lines += [
            f"schemathesis against `/v1/openapi.json` with a real project key, {args.fuzz_examples} examples "
            "per operation and mode (valid and invalid requests; three in four aimed at ids that exist): "
            f"{fuzz_result.operations} operations, {fuzz_result.requests:,} requests; statuses {statuses}.",
            "",
            f"**5xx responses: {sum(v for k, v in fuzz_result.statuses.items() if k >= 500)}; schema "
            f"violations: {len(fuzz_result.failures)}.**",
            "",
        ]
        for failure in fuzz_result.failures[:30]:
            lines.append(f"* `{failure}`")
        lines += [
            "",
            "A bounded run of the same fuzzing is `tests/security/test_fuzz.py` (in `make test` and "
            "`make test-services`).",
        ]
    lines += [
        "",
        "## Isolation and secrets",
        "",
        "* `tests/memories/api/test_access.py` (the one access matrix): every /v1 memory route × project A's "
        "key × project B's ids is a 404 that changes nothing; a publishable key on every route is a 401; "
        "missing, malformed and revoked keys are 401; the matrix fails when a route is added without it.",
        "* `tests/security/test_canaries.py`: fake secrets (OpenAI- and Anthropic-style keys, another "
        "project's real key, a JWT bearer token, password= and token: values) pushed through reported "
        "failures under every policy, the failed task's output, digests, the decorate answer, error bodies "
        "and the logs: 0 found.",
    ]
    (DOCS / "reliability.md").write_text("\n".join(lines) + "\n")


def web_sigterm_section(w: dict | None, args) -> list[str]:
    lines = ["## A web process sent SIGTERM mid-turn", ""]
    if not w:
        return lines + ["Not run.", ""]

    def fmt(d: dict) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(d.items())) or "none"

    before, after = w["before"], w["after"]
    lines += [
        f"During the `web-sigterm` phase, besides locust, {args.slow_talkers} threads talk to a second agent "
        f"whose workflow is an `http_call` to a local stub on 127.0.0.1 that answers after {SLOW_SECONDS} s, "
        "then the `demo` model — so a turn is in flight most of the time. One uvicorn worker gets SIGTERM "
        "(the supervisor starts a replacement), later the whole server does and is started again (see the "
        "events above). A worker that gets SIGTERM stops every running turn at its next task boundary "
        "(EXECUTION_INTERRUPTED, everything the attempt wrote marked uncommitted, the input kept), then "
        "finishes its open requests and exits.",
        "",
        "| check | result |",
        "|---|---|",
        "| slow-agent conversations opened (one say each; a say refused while the server was down leaves "
        f"one without a turn) | {w['conversations']:,} |",
        f"| say answers by state | {fmt(w['answered'])} |",
        f"| requests that failed (create conversation or say, while the server was down or restarting) | "
        f"{w['failed_requests']} |",
        f"| turns in the database by state after the phase | {fmt(before['states'])} |",
        f"| entries of interrupted turns other than the input: committed / uncommitted | "
        f"**{before['committed_after_interrupt']}** / {before['uncommitted_after_interrupt']} |",
        f"| interrupted or failed turns rerun (`POST /v1/conversations/{{id}}/rerun`) | {w['rerun']} → "
        f"{fmt(w['rerun_outcomes'])} |",
        f"| turns by state after the reruns | {fmt(after['states'])} |",
        f"| committed entries of interrupted turns after the reruns (other than the input) | "
        f"**{after['committed_after_interrupt']}** |",
        "| check: no turn IN_PROGRESS, nothing half-committed, every rerun READY | "
        f"{'✅' if w['ok'] else '❌'} |",
        "",
        "A rerun is a new attempt of the same turn (same number, same input): a READY count that grows by "
        "the number rerun, and no interrupted turn left, means each recovered.",
        "",
    ]
    return lines


def sdk_section(counts: dict | None, args) -> list[str]:
    lines = ["## SDK clients throughout the faults", ""]
    if not counts:
        return lines + ["Not run.", ""]
    lines += [
        f"{args.sdk_threads} threads with the Python SDK (`Threadless(timeout=2)`, one client shared), each "
        "looping decorate → report on its own memory (0.5 s pause; paused while each phase's counts are "
        "taken), from the start of the first fault phase to the end of the last. A degraded turn is one the "
        "SDK answered from its local tail because the service did not answer in time or at all; report "
        "failures go to `on_error` (never raised).",
        "",
        "| phase | turns | degraded | exceptions raised to the caller | report errors (on_error) | slowest "
        "decorate s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for phase, row in counts.items():
        lines.append(
            f"| {phase} | {row['turns']:,} | {row['degraded']:,} | **{row['exceptions']}** "
            f"| {row['report_errors']} | {row['max_s']:.2f} |"
        )
    total = {k: sum(r[k] for r in counts.values()) for k in ("turns", "degraded", "exceptions")}
    lines += [
        "",
        f"Total: {total['turns']:,} turns, {total['degraded']:,} degraded, "
        f"**{total['exceptions']} exceptions** raised to the caller.",
        "",
    ]
    return lines


def rerender(args) -> None:
    from harness.fuzz import FuzzResult

    saved = json.loads((VAR / "reliability" / "results.json").read_text())
    results = saved["results"]
    for r in results:  # recompute each verdict with the current rule
        failed_writes = sum(r["stats"].get(n, {}).get("failures", 0) for n in ("decorate", "report"))
        write_ok = (
            r["stored"] == r["acked"]
            if not failed_writes
            else r["acked"] <= r["stored"] <= r["acked"] + failed_writes
        )
        say_failed = r["stats"].get("say", {}).get("failures", 0)
        say_ok = (
            r["say_stored"] == r["say_ok"]
            if not say_failed
            else r["say_ok"] <= r["say_stored"] <= r["say_ok"] + say_failed
        )
        r["failed_writes"] = failed_writes
        r["ok"] = write_ok and r["drained_s"] >= 0 and say_ok
    fuzz_result = None
    if saved.get("fuzz"):
        fuzz_result = FuzzResult(**{k: v for k, v in saved["fuzz"].items() if k != "statuses"})
        fuzz_result.statuses = {int(k): v for k, v in saved["fuzz"]["statuses"].items()}
    info = machine()
    info["date"] = saved.get("date", info["date"])
    write_doc(
        info,
        results,
        fuzz_result,
        argparse.Namespace(**{**vars(args), **saved.get("args", {})}),
        time.time() - saved["seconds"] if "seconds" in saved else 0,
        saved.get("extra", {}),
    )
    log("rewrote docs/reliability.md")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=16)
    parser.add_argument("--load-seconds", type=int, default=45)
    parser.add_argument("--fault-seconds", type=int, default=30)
    parser.add_argument("--broker-down", type=int, default=30)
    parser.add_argument("--fuzz-examples", type=int, default=8)
    parser.add_argument("--web-workers", type=int, default=3)
    parser.add_argument("--sdk-threads", type=int, default=3)
    parser.add_argument("--slow-talkers", type=int, default=8)
    parser.add_argument("--skip-fuzz", action="store_true")
    parser.add_argument("--rerender", action="store_true", help="rewrite the doc from the last run's results")
    parser.add_argument(
        "--only",
        choices=["all", "embedded"],
        default="all",
        help="embedded: only the embedded default's phases (their section of the doc is replaced)",
    )
    parser.add_argument("--embedded-seconds", type=int, default=20)
    parser.add_argument("--embedded-clients", type=int, default=6)
    parser.add_argument("--soak-messages", type=int, default=20000)
    args = parser.parse_args()
    if args.rerender:
        return rerender(args)
    if args.only == "embedded":
        return embedded_only(args)
    started = time.time()
    DOCS.mkdir(exist_ok=True)
    info = machine()
    stack = Stack(web_workers=args.web_workers)
    results: list[dict] = []
    extra: dict = {}
    fuzz_result = None
    try:
        stack.start()
        results = phases(stack, args, extra)
        if not args.skip_fuzz:
            from harness.fuzz import fuzz

            log("fuzzing")
            fuzz_result = fuzz(stack.url, stack.key, max_examples=args.fuzz_examples)
            log(
                f"fuzz: {fuzz_result.requests} requests, statuses {fuzz_result.statuses}, "
                f"{len(fuzz_result.failures)} failures"
            )
    finally:
        stack.stop()
    extra["embedded"] = embedded_faults.run(args)
    info["date"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    write_doc(info, results, fuzz_result, args, started, extra)
    (VAR / "reliability" / "results.json").write_text(
        json.dumps(
            {
                "results": results,
                "extra": extra,
                "fuzz": fuzz_result.__dict__ if fuzz_result else None,
                "date": info["date"],
                "seconds": time.time() - started,
                "args": {k: v for k, v in vars(args).items() if k != "rerender"},
            },
            indent=1,
            default=str,
        )
    )
    log("wrote docs/reliability.md")
    sdk_exceptions = sum(row["exceptions"] for row in extra.get("sdk", {}).values())
    if (
        not all(r["ok"] for r in results)
        or (fuzz_result and fuzz_result.failures)
        or sdk_exceptions
        or not extra.get("web_sigterm", {}).get("ok")
        or not all(r["ok"] for r in extra["embedded"]["results"])
    ):
        sys.exit(1)


def embedded_only(args) -> None:
    """Only the embedded default's phases: their section of docs/reliability.md is replaced (or added)."""
    embedded = embedded_faults.run(args)
    out = VAR / "reliability"
    out.mkdir(parents=True, exist_ok=True)
    (out / "embedded.json").write_text(json.dumps(embedded, indent=1, default=str))
    doc = DOCS / "reliability.md"
    text = doc.read_text() if doc.exists() else "# Reliability: load, faults and fuzzing\n"
    section = "\n".join(embedded_faults.section(embedded)) + "\n"
    heading = section.splitlines()[0]
    if heading in text:
        start = text.index(heading)
        following = text.find("\n## ", start + len(heading))
        text = text[:start] + section + (text[following + 1 :] if following >= 0 else "")
    else:
        at = text.find("\n## Fuzzing")
        text = text[: at + 1] + section + "\n" + text[at + 1 :] if at >= 0 else text + "\n" + section
    doc.write_text(text)
    log("wrote the embedded default's section of docs/reliability.md")
    if not all(r["ok"] for r in embedded["results"]):
        sys.exit(1)


if __name__ == "__main__":
    main()
