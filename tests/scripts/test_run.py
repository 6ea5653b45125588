"""`make run` and `make serve` keep their worker running and stop everything when told to.

`docker stop`, systemd and process supervisors send SIGTERM to the whole process group; a
terminal's Ctrl-C sends SIGINT to it. Either must stop the web server and the Celery worker
(with its beat) within 30 s, and `make` itself must exit. A worker killed with SIGKILL under
either script is started again, its death said once on the terminal and in the worker log.
The tests run the real scripts (scripts/run.sh, scripts/serve.sh) under a real `make` (a
one-line Makefile, so migrate and bootstrap_demo are not timed here) in its own session, on the
embedded default in a temporary var dir, with PORT on a free loopback port. About 10-30 s each.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import IO

import httpx
import pytest

from harness.servers import ROOT, free_port

pytestmark = pytest.mark.live

START_SECONDS = 180  # a bound on waiting on a loaded machine: it returns once both are up
STOP_SECONDS = 30
RESTART_SECONDS = 120  # a bound on waiting for the new worker on a loaded machine, not a timing claim
CRASH_LINE = "CRITICAL threadless: the background worker died (killed by SIGKILL"


def _session_members(sid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[3]) == sid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def _diagnosis(sid: int, worker_log: Path) -> str:
    """What still ran and how the worker ended, for a failure message (the stop has flaked only
    on a heavily loaded machine, never alone)."""
    lines = []
    for pid in _session_members(sid):
        try:
            cmd = (
                (Path("/proc") / str(pid) / "cmdline")
                .read_bytes()
                .replace(b"\0", b" ")
                .decode(errors="replace")
            )
        except OSError:
            continue
        lines.append(f"  {pid}: {cmd[:160]}")
    tail = worker_log.read_text(errors="replace").splitlines()[-15:] if worker_log.exists() else []
    return "\nstill running:\n" + "\n".join(lines) + "\nworker.log (tail):\n" + "\n".join(tail)


def _started(port: int, worker_log: Path) -> bool:
    try:
        ok = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False
    return ok and worker_log.exists() and "ready." in worker_log.read_text(errors="replace")


def _as_from_a_terminal() -> None:
    """`make run` starts as from a terminal: SIGINT and SIGTERM at their defaults and unblocked,
    whatever this test process inherited (a shell's `cmd &` starts it with SIGINT ignored, and a
    shell script cannot trap a signal ignored when it started)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT, signal.SIGTERM])


def _make_from_a_terminal(tmp_path: Path, script: str, **settings: str) -> tuple[subprocess.Popen, IO[bytes]]:
    """`make run` (a Makefile running scripts/<script>) in a session of its own, as a terminal starts it,
    on the embedded default whatever the suite runs on; its output goes to tmp_path/run.log."""
    makefile = tmp_path / "Makefile"
    makefile.write_text(f"run:\n\t@bash {ROOT}/scripts/{script}\n")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL", "THREADLESS_SERVICES", "MAKEFLAGS")
    }
    env.update(HOST="127.0.0.1", **settings)
    log = open(tmp_path / "run.log", "wb")
    make = subprocess.Popen(
        ["make", "-s", "-f", str(makefile), "run"],
        cwd=tmp_path,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_as_from_a_terminal,
    )
    return make, log


def _end_session(make: subprocess.Popen, log: IO[bytes]) -> None:
    """Kill only what the test started: the processes of make's session."""
    for pid in _session_members(make.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if make.poll() is None:
        make.kill()
        make.wait()
    log.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_make_runs_process_group_stops_web_and_worker_and_make_exits(tmp_path, sig):
    var, port = tmp_path / "var", free_port()
    make, log = _make_from_a_terminal(tmp_path, "run.sh", THREADLESS_VAR_DIR=str(var), PORT=str(port))
    try:
        deadline = time.monotonic() + START_SECONDS
        while not _started(port, var / "worker.log"):
            assert make.poll() is None, (tmp_path / "run.log").read_text()
            assert time.monotonic() < deadline, (
                "make run did not start: " + (tmp_path / "run.log").read_text()
            )
            time.sleep(0.3)
        members = _session_members(make.pid)
        # make, run.sh, uvicorn, the worker, its two pool processes and beat.
        assert len(members) >= 6, members
        os.killpg(make.pid, sig)  # what `kill -TERM -<pgid>` / Ctrl-C does
        try:
            make.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            pytest.fail(
                f"make run still running {STOP_SECONDS} s after {sig.name}: "
                + (tmp_path / "run.log").read_text()
                + _diagnosis(make.pid, var / "worker.log")
            )
        assert _session_members(make.pid) == [], "processes outlived make run"
        output = (tmp_path / "run.log").read_text()
        assert "stopped" in output and "killing" not in output, output  # a clean stop, not the hard kill
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
        assert "Warm shutdown" in (var / "worker.log").read_text(errors="replace")
    finally:
        _end_session(make, log)


def _command_line(pid: int) -> str:
    try:
        return (
            (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return ""


def _worker_pid(sid: int) -> int | None:
    """The Celery worker's main process: the supervisor's child."""
    for pid in _session_members(sid):
        if "threadless_site.supervise" in _command_line(pid):
            try:
                found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                return None
            return int(found[0]) if found else None
    return None


def _beat_pid(var: Path) -> int | None:
    try:
        return json.loads((var / "worker-heartbeat.json").read_text())["pid"]
    except (OSError, ValueError, KeyError):
        return None


@pytest.mark.parametrize("script", ["run.sh", "serve.sh"], ids=["make-run", "make-serve"])
def test_a_worker_killed_under_make_run_or_make_serve_is_restarted_and_its_death_said_once(tmp_path, script):
    var, port, run_log = tmp_path / "var", free_port(), tmp_path / "run.log"
    make, log = _make_from_a_terminal(
        tmp_path,
        script,
        THREADLESS_VAR_DIR=str(var),
        PORT=str(port),
        THREADLESS_WEB_WORKERS="1",
        THREADLESS_WORKER_HEARTBEAT_SECONDS="0.5",
    )
    worker_log = var / "worker.log"
    try:
        deadline = time.monotonic() + START_SECONDS
        while not (_started(port, worker_log) and _beat_pid(var)):
            assert make.poll() is None, run_log.read_text()
            assert time.monotonic() < deadline, "make did not start: " + run_log.read_text()
            time.sleep(0.3)
        first = _worker_pid(make.pid)
        assert first and _beat_pid(var) == first
        os.kill(first, signal.SIGKILL)

        deadline = time.monotonic() + RESTART_SECONDS
        while not ((second := _worker_pid(make.pid)) and second != first and _beat_pid(var) == second):
            assert make.poll() is None, run_log.read_text()
            assert time.monotonic() < deadline, "no new worker: " + _diagnosis(make.pid, worker_log)
            time.sleep(0.3)
        health = httpx.get(f"http://127.0.0.1:{port}/healthz/worker", timeout=10)
        assert health.status_code == 200 and health.json()["worker"] == "ok"
        assert worker_log.read_text(errors="replace").count(CRASH_LINE) == 1
        assert run_log.read_text(errors="replace").count(CRASH_LINE) == 1  # on the terminal too

        os.killpg(make.pid, signal.SIGTERM)
        make.wait(timeout=STOP_SECONDS)
        assert _session_members(make.pid) == [], "processes outlived make"
        assert worker_log.read_text(errors="replace").count(CRASH_LINE) == 1  # a stop is no death
    finally:
        _end_session(make, log)


@pytest.mark.parametrize("script", ["run.sh", "serve.sh"], ids=["make-run", "make-serve"])
def test_under_the_json_log_format_every_line_is_json_and_listening_is_said_once_it_answers(tmp_path, script):
    """THREADLESS_LOG_FORMAT=json: every line on the terminal and in the worker's log is one JSON
    object, from the first (this script's, the web server's and Celery's before Django configures
    logging) to the last of the stop; "listening" is said only once the address answers. A start
    begins the metric files from none (docs/deployment.md, Metrics)."""
    var, port, run_log = tmp_path / "var", free_port(), tmp_path / "run.log"
    stale = var / "metrics" / "counter_999999.db"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"\0" * 8)
    make, log = _make_from_a_terminal(
        tmp_path,
        script,
        THREADLESS_VAR_DIR=str(var),
        PORT=str(port),
        THREADLESS_WEB_WORKERS="1",
        THREADLESS_LOG_FORMAT="json",
    )
    try:
        deadline = time.monotonic() + START_SECONDS
        while not (_started(port, var / "worker.log") and "listening on" in run_log.read_text()):
            said = "listening on" in run_log.read_text()
            if said:  # said: then it answers
                assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
            assert make.poll() is None, run_log.read_text()
            assert time.monotonic() < deadline, "make did not start: " + run_log.read_text()
            time.sleep(0.1)
        os.killpg(make.pid, signal.SIGTERM)
        make.wait(timeout=STOP_SECONDS)
        assert not stale.exists()
        for where in (run_log, var / "worker.log"):
            lines = where.read_text().splitlines()
            assert len(lines) >= 4, lines
            for line in lines:
                try:
                    record = json.loads(line)
                except ValueError:
                    pytest.fail(f"not a JSON line in {where.name}: {line!r}")
                assert {"timestamp", "level", "logger", "message"} <= record.keys(), line
        said = [json.loads(line)["message"] for line in run_log.read_text().splitlines()]
        assert said[0].startswith("starting web on") and said[-1] == "stopped", said
        assert sum(m.startswith(f"listening on http://127.0.0.1:{port}/") for m in said) == 1, said
    finally:
        _end_session(make, log)
