"""A real Celery worker under threadless_site.supervise (what `make run` and `make serve`
use) next to a real uvicorn server, on the embedded default: killed with SIGKILL it is started
again and nothing reported is left unprocessed; unreadable message files are set aside while it
keeps consuming; /healthz/worker turns 503 within the stale limit once it stops and 200 when it
returns. A short stale limit and heartbeat keep it to a minute or so."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from harness.servers import ROOT, ThreadlessServer, services_mode

pytestmark = pytest.mark.live

STALE_SECONDS = 4


def wait_for(predicate, timeout: float = 90.0, interval: float = 0.2):
    """Poll until `predicate()` is truthy (a bound on waiting, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time")


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


class Supervised:
    """`python -m threadless_site.supervise -- celery … worker -B` with the server's environment."""

    def __init__(self, server: ThreadlessServer) -> None:
        self.server = server
        self.log = server.var / "worker.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        celery = [
            str(Path(sys.executable).parent / "celery"),
            "-A",
            "threadless_site",
            "worker",
            "-B",
            "--loglevel=INFO",
            "--concurrency=1",
            "--without-gossip",
            "--without-mingle",
            "-s",
            str(self.server.var / "beat-schedule"),
        ]
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "threadless_site.supervise",
                "--log",
                str(self.log),
                "--stop-seconds",
                "20",
                "--",
                *celery,
            ],
            cwd=ROOT,
            env=self.server.env,
            process_group=0,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def worker_pid(self) -> int | None:
        found = children(self.proc.pid)
        return found[0] if found else None

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=40)

    def kill_everything(self) -> None:
        if self.proc and self.proc.poll() is None:
            pid = self.worker_pid()
            os.killpg(self.proc.pid, signal.SIGKILL)
            if pid:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.proc.wait()


@pytest.fixture(scope="module")
def server():
    if services_mode():
        pytest.skip("the embedded default's supervision; the services run has its own broker")
    env = {
        "THREADLESS_WORKER_STALE_SECONDS": str(STALE_SECONDS),
        "THREADLESS_WORKER_HEARTBEAT_SECONDS": "0.5",
    }
    with ThreadlessServer(env=env) as live:
        yield live


@pytest.fixture
def supervised(server):
    worker = Supervised(server)
    yield worker
    worker.kill_everything()


def worker_health(server) -> tuple[int, dict]:
    response = httpx.get(server.url + "/healthz/worker", timeout=10)
    return response.status_code, response.json()


def beating_since(server, started: float) -> bool:
    """200, from a heartbeat written after `started` (not one an earlier worker left)."""
    status, body = worker_health(server)
    return status == 200 and datetime.fromisoformat(body["lastHeartbeat"]).timestamp() >= started


def report_processed(server) -> bool:
    """A decorate + report, then wait until its background work is done."""
    with server.client() as client:
        memory = client.post("/memories", json={}).json()["id"]
        assert (
            client.post(
                f"/memories/{memory}/decorate",
                json={"messages": [{"role": "user", "content": "I have a beagle called Biscuit."}]},
            ).status_code
            == 200
        )
        assert (
            client.post(
                f"/memories/{memory}/report", json={"messages": [{"role": "assistant", "content": "ok"}]}
            ).status_code
            == 202
        )
        return wait_for(lambda: client.get(f"/memories/{memory}").json()["processing"] == "processed")


def test_a_worker_killed_with_sigkill_is_restarted_and_unreadable_files_are_set_aside_while_it_consumes(
    server, supervised
):
    queue = server.var / "broker" / "queue"
    (queue / "0_empty.celery.msg").write_bytes(b"")
    (queue / "00_truncated.celery.msg").write_bytes(b'{"body": "eyJh", "content-enc')
    started = time.time()
    supervised.start()
    wait_for(lambda: beating_since(server, started))
    assert report_processed(server)
    dead = sorted(p.name for p in (server.var / "broker" / "dead").iterdir())
    assert dead == ["00_truncated.celery.msg", "0_empty.celery.msg"]
    log = supervised.log.read_text(errors="replace")
    assert log.count("unreadable message file set aside") == 2 and "Unrecoverable error" not in log

    first = supervised.worker_pid()
    os.kill(first, signal.SIGKILL)
    second = wait_for(lambda: (pid := supervised.worker_pid()) and pid != first and pid)
    assert second != first
    log = supervised.log.read_text(errors="replace")
    assert log.count("CRITICAL threadless: the background worker died (killed by SIGKILL") == 1
    assert report_processed(server)  # the new worker consumes
    assert worker_health(server)[0] == 200
    assert supervised.proc.poll() is None


def test_healthz_worker_turns_503_within_the_stale_limit_when_the_worker_stops_and_200_when_it_returns(
    server, supervised
):
    started = time.time()
    supervised.start()
    wait_for(lambda: beating_since(server, started))
    assert supervised.stop() == 0  # SIGTERM: a clean stop, the worker's warm shutdown
    assert "Warm shutdown" in supervised.log.read_text(errors="replace")
    stopped = time.monotonic()
    status, body = wait_for(lambda: (h := worker_health(server))[0] == 503 and h, timeout=STALE_SECONDS + 30)
    assert body["worker"] == "stale" and body["ageSeconds"] > STALE_SECONDS
    assert time.monotonic() - stopped < STALE_SECONDS + 30  # the bound above; a monitor sees it promptly
    ready = httpx.get(server.url + "/readyz", timeout=10)
    assert ready.status_code == 200 and ready.json()["worker"]["worker"] == "stale"

    started = time.time()
    supervised.start()
    wait_for(lambda: beating_since(server, started))
    assert worker_health(server)[1]["worker"] == "ok"
