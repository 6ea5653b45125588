"""`make run` stops everything when its process group is told to (issue 14 item 14).

`docker stop`, systemd and process supervisors send SIGTERM to the whole process group; a
terminal's Ctrl-C sends SIGINT to it. Either must stop the web server and the Celery worker
(with its beat) within 30 s, and `make` itself must exit. The test runs the real
scripts/run.sh under a real `make` (a one-line Makefile, so migrate and bootstrap_demo are not
timed here) in its own session, on the embedded default in a temporary var dir, with PORT on a
free loopback port. About 10-15 s per signal.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from harness.servers import ROOT, free_port

pytestmark = pytest.mark.live

START_SECONDS = 40
STOP_SECONDS = 30


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


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_make_runs_process_group_stops_web_and_worker_and_make_exits(tmp_path, sig):
    var = tmp_path / "var"
    makefile = tmp_path / "Makefile"
    makefile.write_text(f"run:\n\t@bash {ROOT}/scripts/run.sh\n")
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL", "THREADLESS_SERVICES", "MAKEFLAGS")
    }
    env.update(THREADLESS_VAR_DIR=str(var), PORT=str(port), HOST="127.0.0.1")
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
        # Only what this test started: the processes of make's session.
        for pid in _session_members(make.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if make.poll() is None:
            make.kill()
            make.wait()
        log.close()
