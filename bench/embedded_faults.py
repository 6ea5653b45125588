"""`make reliability`, embedded default: SQLite, the `threadless-fs://` broker (a folder of message
files) and a Celery worker under threadless_site.supervise, as `make run` / `make serve`
run them. Three phases, each ending with a count check:

1. two-publishers: `granian --workers 2` (two web processes, each with its own outbox
   publisher) under clients doing decorate → report at full speed while the worker consumes:
   messages stored = acknowledged, every outbox row processed;
2. worker-kill: the same load, the worker's main process killed with SIGKILL a third of the way
   in; the supervisor starts it again, the outbox sweep re-queues what the dead worker held:
   stored = acknowledged, every outbox row processed; /healthz/worker sampled every second;
3. soak: N publishes of a trivial task from two producer processes at full speed while the one
   worker consumes: every message processed exactly once, no crash, nothing set aside.

    python -m bench.reliability --only embedded [--embedded-seconds 20] [--soak-messages 20000]
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

from bench.common import ROOT
from bench.django_setup import SETTINGS

sys.path.insert(0, str(ROOT))
from harness.servers import free_port  # noqa: E402

BIN = Path(sys.executable).parent
CRASH_LINE = "CRITICAL threadless: the background worker died"


def log(*parts) -> None:
    print("[reliability/embedded]", *parts, file=sys.stderr, flush=True)


def wait_for(check, timeout: float, what: str):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            value = check()
            if value:
                return value
        except Exception:  # noqa: BLE001 - not up yet
            pass
        time.sleep(0.2)
    raise RuntimeError(f"timed out waiting for {what}")


class EmbeddedStack:
    """SQLite + threadless-fs + `granian --workers 2` (as `make serve`, without its worker) + a supervised
    worker."""

    def __init__(self, *, web_processes: int = 2) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="tl-embedded-"))
        self.var = self.root / "var"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.web_processes = web_processes
        self.web: subprocess.Popen | None = None
        self.supervisor: subprocess.Popen | None = None
        self.key = ""
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL", "THREADLESS_SERVICES")
        }
        self.env = {
            **env,
            "DJANGO_SETTINGS_MODULE": SETTINGS,
            "THREADLESS_VAR_DIR": str(self.var),
            "THREADLESS_RATE_LIMIT_PER_MINUTE": "0",
            "THREADLESS_OUTBOX_STALE_SECONDS": "60",
            "THREADLESS_OUTBOX_SWEEP_SECONDS": "30",
            "THREADLESS_WORKER_HEARTBEAT_SECONDS": "1",
            "THREADLESS_WORKER_STALE_SECONDS": "10",
            "PYTHONUNBUFFERED": "1",
            "LOG_LEVEL": "WARNING",
        }

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

    def start(self) -> None:
        import json

        self.var.mkdir(parents=True)
        self.manage("migrate", "--noinput", "-v0")
        self.key = json.loads(self.manage("bootstrap_demo", "--json").strip().splitlines()[-1])["key"]
        self.web = subprocess.Popen(
            [
                str(BIN / "granian"),
                "--interface",
                "asgi",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--workers",
                str(self.web_processes),
                "--loop",
                "uvloop",
                "--no-ws",
                "threadless_site.asgi:application",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=open(self.root / "web.log", "ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.start_worker()
        wait_for(lambda: httpx.get(self.url + "/healthz", timeout=2).status_code == 200, 120, "web server")
        wait_for(lambda: httpx.get(self.url + "/healthz/worker", timeout=5).status_code == 200, 120, "worker")

    def start_worker(self) -> None:
        celery = [
            str(BIN / "celery"),
            "-A",
            "threadless_site",
            "worker",
            "-B",
            "--loglevel=INFO",
            "--concurrency=2",
            "--without-gossip",
            "--without-mingle",
            "--include",
            "bench.soak_tasks",
            "-s",
            str(self.var / "beat-schedule"),
        ]
        self.supervisor = subprocess.Popen(
            [
                str(BIN / "python"),
                "-m",
                "threadless_site.supervise",
                "--log",
                str(self.worker_log),
                "--",
                *celery,
            ],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    @property
    def worker_log(self) -> Path:
        return self.var / "worker.log"

    def worker_pid(self) -> int | None:
        try:
            found = (
                Path(f"/proc/{self.supervisor.pid}/task/{self.supervisor.pid}/children").read_text().split()
            )
        except OSError:
            return None
        return int(found[0]) if found else None

    def heartbeat_pid(self) -> int | None:
        import json

        try:
            return json.loads((self.var / "worker-heartbeat.json").read_text())["pid"]
        except (OSError, ValueError, KeyError):
            return None

    def log_count(self, text: str) -> int:
        return self.worker_log.read_text(errors="replace").count(text) if self.worker_log.exists() else 0

    def dead_files(self) -> int:
        dead = self.var / "broker" / "dead"
        return len(list(dead.iterdir())) if dead.exists() else 0

    def sql(self, query: str) -> list[tuple]:
        with sqlite3.connect(self.var / "threadless.sqlite3", timeout=30) as conn:
            return conn.execute(query).fetchall()

    def stored_messages(self) -> int:
        return self.sql("SELECT count(*) FROM memories_entry WHERE kind = 'message'")[0][0]

    def outbox(self) -> dict:
        rows, pending, rerun = self.sql(
            "SELECT count(*), sum(processed_at IS NULL), sum(attempts > 1) FROM memories_outbox"
        )[0]
        return {"rows": rows, "pending": pending or 0, "attempts_gt_1": rerun or 0}

    def wait_drained(self, timeout: float) -> float:
        started = time.time()
        while time.time() - started < timeout:
            if self.outbox()["pending"] == 0:
                return time.time() - started
            time.sleep(1)
        return -1

    def stop(self) -> None:
        for proc in (self.supervisor, self.web):
            if proc and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in (self.supervisor, self.web):
            if proc:
                try:
                    proc.wait(timeout=40)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        shutil.rmtree(self.root, ignore_errors=True)


class Conversations:
    """Client threads, each on its own memory, doing decorate → report as fast as answers come."""

    def __init__(self, stack: EmbeddedStack, threads: int) -> None:
        self.stack, self.threads = stack, threads
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.counts = Counter()

    def run_one(self) -> None:
        headers = {"Authorization": f"Bearer {self.stack.key}"}
        with httpx.Client(base_url=self.stack.url + "/v1", headers=headers, timeout=30) as client:
            memory = client.post("/memories", json={}).json()["id"]
            turn = 0
            while not self.stop.is_set():
                turn += 1
                counts = Counter()
                try:
                    r = client.post(
                        f"/memories/{memory}/decorate",
                        json={
                            "messages": [
                                {"role": "user", "content": f"My note number {turn} is about the garden."}
                            ]
                        },
                    )
                    counts["decorate_ok" if r.status_code == 200 else "decorate_failed"] += 1
                    if r.status_code == 200:
                        counts["acked"] += 1
                        r = client.post(
                            f"/memories/{memory}/report",
                            json={"messages": [{"role": "assistant", "content": "Noted."}]},
                        )
                        counts["report_ok" if r.status_code == 202 else "report_failed"] += 1
                        counts["acked"] += r.status_code == 202
                except httpx.HTTPError:
                    counts["errors"] += 1
                with self.lock:
                    self.counts.update(counts)

    def run(self, seconds: float, during=None) -> dict:
        workers = [threading.Thread(target=self.run_one, daemon=True) for _ in range(self.threads)]
        for w in workers:
            w.start()
        started = time.time()
        events = []
        while time.time() - started < seconds:
            if during:
                note = during(time.time() - started)
                if note:
                    events.append(f"t={time.time() - started:.0f}s {note}")
            time.sleep(0.5)
        self.stop.set()
        for w in workers:
            w.join(60)
        return {"counts": dict(self.counts), "events": events, "seconds": time.time() - started}


def load_phase(stack: EmbeddedStack, tag: str, *, threads: int, seconds: float, kill: bool) -> dict:
    before_messages, before_crashes = stack.stored_messages(), stack.log_count(CRASH_LINE)
    health: Counter = Counter()
    state = {"killed": None, "back": None, "old": None}

    def watch_restart() -> None:
        """Until the new worker's own heartbeat arrives (it may outlast the traffic)."""
        while time.time() - state["killed"] < 300:
            pid = stack.worker_pid()
            if pid and pid != state["old"] and stack.heartbeat_pid() == pid:
                state["back"] = (pid, time.time() - state["killed"])
                return
            time.sleep(0.2)

    def during(t: float):
        code = httpx.get(stack.url + "/healthz/worker", timeout=5).status_code
        health[code] += 1
        if kill and state["killed"] is None and t >= seconds / 3:
            state["old"] = stack.worker_pid()
            os.kill(state["old"], signal.SIGKILL)
            state["killed"] = time.time()
            threading.Thread(target=watch_restart, daemon=True).start()
            return f"worker main process (pid {state['old']}) killed with SIGKILL"
        return None

    log(
        f"{tag}: {threads} clients for {seconds:.0f}s"
        + (", worker killed a third of the way in" if kill else "")
    )
    run = Conversations(stack, threads).run(seconds, during)
    drained = stack.wait_drained(900)
    if state["back"]:
        run["events"].append(
            f"the supervisor's new worker (pid {state['back'][0]}) wrote its first heartbeat "
            f"{state['back'][1]:.0f}s after the kill"
        )
    stored = stack.stored_messages() - before_messages
    counts = run["counts"]
    outbox = stack.outbox()
    failed = counts.get("decorate_failed", 0) + counts.get("report_failed", 0) + counts.get("errors", 0)
    result = {
        "tag": tag,
        "seconds": round(run["seconds"]),
        "turns": counts.get("report_ok", 0),
        "acked": counts.get("acked", 0),
        "stored": stored,
        "failed": failed,
        "outbox": outbox,
        "drained_s": drained,
        "crashes": stack.log_count(CRASH_LINE) - before_crashes,
        "dead": stack.dead_files(),
        "healthz_worker": {str(k): v for k, v in sorted(health.items())},
        "events": run["events"],
    }
    result["ok"] = (
        drained >= 0
        and outbox["pending"] == 0
        and failed == 0
        and stored == result["acked"]
        and result["crashes"] == (1 if kill else 0)
        and result["dead"] == 0
    )
    log(f"{tag}: {result}")
    return result


def soak_phase(stack: EmbeddedStack, messages: int, producers: int = 2) -> dict:
    marks = stack.root / "marks.txt"
    before_crashes = stack.log_count(CRASH_LINE)
    share = messages // producers
    log(f"soak: {messages} publishes from {producers} processes while the worker consumes")
    started = time.time()
    procs = [
        subprocess.Popen(
            [
                str(BIN / "python"),
                "-m",
                "bench.soak_tasks",
                "produce",
                "--start",
                str(i * share),
                "--count",
                str(share),
                "--out",
                str(marks),
            ],
            cwd=ROOT,
            env=stack.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(producers)
    ]
    outputs = [p.communicate(timeout=1800)[0] for p in procs]
    published_s = time.time() - started

    def lines() -> int:
        return marks.read_text().count("\n") if marks.exists() else 0

    deadline = time.time() + 1800
    last, still = -1, time.time()
    while time.time() < deadline:
        seen = lines()
        if seen >= share * producers:
            break
        if seen != last:
            last, still = seen, time.time()
        elif time.time() - still > 120:
            break  # nothing new for two minutes: count what arrived
        time.sleep(1)
    processed_s = time.time() - started
    time.sleep(3)  # anything processed twice would show up now
    values = [int(v) for v in marks.read_text().split()] if marks.exists() else []
    seen = Counter(values)
    publish_failures = sum(int(o.split("failed ")[1].split()[0]) for o in outputs if "failed " in o)
    result = {
        "tag": "soak",
        "messages": share * producers,
        "producers": producers,
        "publish_failures": publish_failures,
        "processed": len(values),
        "distinct": len(seen),
        "twice_or_more": sum(1 for c in seen.values() if c > 1),
        "missing": share * producers - len(seen),
        "crashes": stack.log_count(CRASH_LINE) - before_crashes,
        "unrecoverable": stack.log_count("Unrecoverable error"),
        "dead": stack.dead_files(),
        "published_s": round(published_s, 1),
        "processed_s": round(processed_s, 1),
        "producer_output": [o.strip()[-200:] for o in outputs],
    }
    result["ok"] = (
        result["missing"] == 0
        and result["twice_or_more"] == 0
        and result["crashes"] == 0
        and result["unrecoverable"] == 0
        and result["dead"] == 0
        and not publish_failures
    )
    log(f"soak: {result}")
    return result


def run(args) -> dict:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the stack on the way out
    stack = EmbeddedStack()
    results: list[dict] = []
    try:
        log("starting SQLite + threadless-fs, granian --workers 2, a supervised worker")
        stack.start()
        results.append(
            load_phase(
                stack,
                "two-publishers",
                threads=args.embedded_clients,
                seconds=args.embedded_seconds,
                kill=False,
            )
        )
        results.append(
            load_phase(
                stack, "worker-kill", threads=args.embedded_clients, seconds=args.embedded_seconds, kill=True
            )
        )
        if args.soak_messages:
            results.append(soak_phase(stack, args.soak_messages))
    finally:
        stack.stop()
    return {"results": results, "clients": args.embedded_clients}


def section(embedded: dict | None) -> list[str]:
    lines = ["## The embedded default: two publishers, a killed worker, a broker soak", ""]
    if not embedded:
        return lines + ["Not run.", ""]
    lines += [
        "SQLite, the `threadless-fs://` broker (kombu's filesystem transport with atomic publishes and a "
        "`dead` folder for unreadable files: `common/broker.py`) and one Celery worker with beat (prefork, "
        "concurrency 2) under `threadless_site.supervise`, as `make run` and `make serve` run them; the web "
        "tier is `granian --workers 2` (as `make serve`, without its worker) (two processes, each publishing "
        "its own reports). "
        f"{embedded['clients']} client threads do decorate → report at full speed, each on its own memory. "
        "Outbox sweep every 30 s (the default), claims stale after 60 s; worker heartbeat every 1 s, stale "
        "after 10 s.",
        "",
        "| phase | seconds | turns | acknowledged msgs | stored msgs | failed requests | outbox rows "
        "(pending, re-run) | drained in | worker deaths seen | dead files | /healthz/worker answers (sampled "
        "1/s) | check |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|:---:|",
    ]
    soak = None
    for r in embedded["results"]:
        if r["tag"] == "soak":
            soak = r
            continue
        ob = r["outbox"]
        health = ", ".join(f"{k}: {v}" for k, v in r["healthz_worker"].items())
        lines.append(
            f"| {r['tag']} | {r['seconds']} | {r['turns']:,} | {r['acked']:,} | {r['stored']:,} | "
            f"{r['failed']} | {ob['rows']:,} ({ob['pending']}, {ob['attempts_gt_1']}) | {r['drained_s']:.0f} "
            f"s | {r['crashes']} | {r['dead']} | {health} | {'✅' if r['ok'] else '❌'} |"
        )
    lines += [""]
    for r in embedded["results"]:
        for event in r.get("events", []):
            lines.append(f"* **{r['tag']}**: {event}")
    lines += [
        "",
        "The outbox rows are cumulative (the second phase's include the first's). In `worker-kill` the "
        "supervisor logs the death once and starts the worker again after 1 s; the messages the dead worker "
        "had taken from the folder (prefetched or running) are re-queued by the outbox sweep once their rows "
        "count as waiting or their claim goes stale, hence the re-runs; every step is idempotent.",
        "",
    ]
    if soak:
        lines += [
            f"**Soak**: {soak['messages']:,} publishes of a trivial task (`bench/soak_tasks.py`: append the "
            f"message's number to a file) from {soak['producers']} processes at full speed while the one "
            f"worker consumes: published in {soak['published_s']} s, all processed {soak['processed_s']} s "
            f"after the start; processed {soak['processed']:,}, distinct {soak['distinct']:,}, missing "
            f"**{soak['missing']}**, processed twice or more **{soak['twice_or_more']}**, worker deaths "
            f"**{soak['crashes']}** "
            f'("Unrecoverable error" lines: {soak["unrecoverable"]}), files set aside {soak["dead"]}, '
            f"publish failures {soak['publish_failures']} {'✅' if soak['ok'] else '❌'}.",
            "",
            f"The worker took about {soak['messages'] / max(soak['processed_s'], 1):.0f} messages/s: the "
            "pace of kombu's virtual transport with prefetch 1 × concurrency 2, which sleeps "
            "`polling_interval` (0.1 s) whenever both slots are full (report work goes up to 50 outbox rows "
            "a message, so this is not the rows' pace), on a machine shared with other jobs. "
            "`tests/common/test_broker.py` has the deterministic race (a producer held between open and "
            "write while a consumer polls: kombu's transport raises the worker-ending `JSONDecodeError`, "
            "ours delivers the whole message) and a 600-message two-process run.",
            "",
        ]
    return lines
