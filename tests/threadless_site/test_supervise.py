"""threadless_site.supervise's back-off and exit wording (the live half: test_worker_supervision.py)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

from threadless_site.supervise import BACKOFF_FIRST, BACKOFF_MAX, HEALTHY_AFTER, describe_exit, next_delay


def test_the_back_off_doubles_while_the_worker_keeps_dying_and_resets_after_a_healthy_run():
    delays = [next_delay(None, 2)]
    for _ in range(7):
        delays.append(next_delay(delays[-1], 2))
    assert (
        delays == [1, 2, 4, 8, 16, 30, 30, 30] and delays[0] == BACKOFF_FIRST and max(delays) == BACKOFF_MAX
    )
    assert next_delay(30, HEALTHY_AFTER) == BACKOFF_FIRST


def test_an_exit_is_described_by_its_code_or_its_signal():
    assert describe_exit(1) == "exit code 1"
    assert describe_exit(-signal.SIGKILL) == "killed by SIGKILL"


def test_a_dying_command_is_restarted_with_one_loud_line_per_death_and_sigterm_stops_the_supervisor(tmp_path):
    log = tmp_path / "worker.log"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "threadless_site.supervise",
            "--log",
            str(log),
            "--",
            sys.executable,
            "-c",
            "print('started', flush=True); raise SystemExit(3)",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while log.read_text().count("started") < 2 if log.exists() else True:
        assert time.monotonic() < deadline, "not restarted"
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    text, terminal = log.read_text(), proc.stderr.read()
    deaths = [line for line in text.splitlines() if "CRITICAL threadless: the background worker died" in line]
    assert 1 <= len(deaths) <= text.count("started")  # one line per death, never more
    assert re.search(r"\(exit code 3, after \d+s\); restarting it in 1s \(restart 1\)", deaths[0])
    assert deaths == [line for line in terminal.splitlines() if "CRITICAL" in line]  # also on the terminal
