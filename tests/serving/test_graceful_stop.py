"""SIGTERM to `make serve`'s web server (granian) reaches a running turn at once: the shutdown flag
is raised by the signal, not by the lifespan shutdown granian sends once open requests have ended.
A real granian process serving tests.serving.turn_app (Threadless's lifespan)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
GRANIAN = Path(sys.executable).parent / "granian"
pytestmark = [
    pytest.mark.live,
    pytest.mark.timeout(180),
    pytest.mark.skipif(not GRANIAN.exists(), reason="granian is not installed"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_sigterm_interrupts_a_running_turn_at_its_next_boundary(tmp_path):
    port = _free_port()
    env = {**os.environ, "THREADLESS_VAR_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [
            str(GRANIAN),
            "--interface",
            "asgi",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            "1",
            "--loop",
            "uvloop",
            "--workers-kill-timeout",
            "60",
            "tests.serving.turn_app:app",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "granian did not start"
            time.sleep(0.3)
        answer: dict = {}

        def turn() -> None:
            answer["body"] = httpx.get(f"http://127.0.0.1:{port}/turn", timeout=60).text

        running = threading.Thread(target=turn)
        running.start()
        time.sleep(1.0)  # the turn is under way
        proc.send_signal(signal.SIGTERM)
        running.join(60)
        # Without the flag the turn would run its 30 s to the end (granian waits for open requests).
        assert answer.get("body") == "interrupted"
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
