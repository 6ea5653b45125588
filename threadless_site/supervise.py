"""Keeps the background worker running: `make run` and `make serve` start it through this.

    python -m threadless_site.supervise [--log FILE] [--stop-seconds N] -- COMMAND [ARG ...]

* The worker runs in a process group of its own, so a signal meant for the supervisor's group
  (a terminal's Ctrl-C, `kill -TERM -<pgid>`) never reaches its pool children behind its back.
* When it dies without being asked to, the supervisor says so once, loudly (one CRITICAL line on
  its stderr and in the worker's log, with the exit code or signal), kills what is left of its
  process group (pool children, the beat process), and starts it again after a back-off: 1 s,
  doubling to 30 s while it keeps dying, back to 1 s once it has run for a minute.
* SIGTERM or SIGINT: one SIGTERM to the worker's main process (Celery's warm shutdown: it
  finishes its running jobs), then the supervisor exits when the worker has; past
  --stop-seconds, or on SIGQUIT or a second SIGINT, the worker's group is killed.
  Every job is idempotent and acks late, so a killed one is delivered again.
* If the supervisor itself is killed, the worker's main process gets SIGKILL (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import argparse
import ctypes
import logging
import os
import signal
import subprocess
import sys
import time
from datetime import datetime

from common.logformat import json_line

BACKOFF_FIRST = 1.0
BACKOFF_MAX = 30.0
HEALTHY_AFTER = 60.0

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the supervisor dies (Linux; elsewhere nothing)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def next_delay(previous: float | None, ran_for: float) -> float:
    """The back-off before the next start: the first after a healthy run (or the first crash),
    else the previous one doubled, up to the cap."""
    if previous is None or ran_for >= HEALTHY_AFTER:
        return BACKOFF_FIRST
    return min(BACKOFF_MAX, previous * 2)


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class Supervisor:
    def __init__(self, command: list[str], *, log_path: str | None, stop_seconds: float) -> None:
        self.command = command
        self.log_path = log_path
        self.stop_seconds = stop_seconds
        self.proc: subprocess.Popen | None = None
        self.stopping = False
        self.force = False
        self.restarts = 0

    # signals ------------------------------------------------------------------------------------
    def _on_stop(self, signum, frame) -> None:
        if self.stopping and signum == signal.SIGINT:
            self.force = True  # a second Ctrl-C
        self.stopping = True

    def _on_force(self, signum, frame) -> None:
        self.stopping = self.force = True

    def install_signals(self) -> None:
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)
        signal.signal(signal.SIGQUIT, self._on_force)

    # output ---------------------------------------------------------------------------------------
    def say(self, line: str, level: int = logging.INFO) -> None:
        if os.environ.get("THREADLESS_LOG_FORMAT") == "json":
            text = json_line("threadless.supervise", level, line)
        else:
            loud = "CRITICAL " if level >= logging.CRITICAL else ""
            text = f"[{datetime.now().strftime('%Y-%m-%d %H:%M:%S')}] {loud}{line}"
        print(text, file=sys.stderr, flush=True)
        if self.log_path:
            with open(self.log_path, "a") as log:
                log.write(text + "\n")

    # the worker -----------------------------------------------------------------------------------
    def start(self) -> None:
        out = open(self.log_path, "ab") if self.log_path else None
        try:
            self.proc = subprocess.Popen(
                self.command,
                stdout=out,
                stderr=subprocess.STDOUT if out else None,
                process_group=0,
                preexec_fn=_die_with_parent,
            )
        finally:
            if out:
                out.close()

    def kill_group(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def wait(self, seconds: float | None = None) -> int | None:
        """The worker's exit code once it exits; None when `seconds` pass or a stop is asked."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while True:
            code = self.proc.poll()
            if code is not None:
                return code
            if self.stopping:
                return None
            if deadline is not None and time.monotonic() >= deadline:
                return None
            time.sleep(0.1)

    def stop(self) -> int:
        if self.proc is None or self.proc.poll() is not None:
            self.kill_group()  # whatever its pool or beat left behind
            return 0
        if not self.force:
            try:
                self.proc.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
            deadline = time.monotonic() + self.stop_seconds
            while self.proc.poll() is None and not self.force and time.monotonic() < deadline:
                time.sleep(0.1)
        if self.proc.poll() is None:
            self.say(
                f"threadless: the background worker did not stop within {self.stop_seconds:.0f}s: killing it"
                if not self.force
                else "threadless: killing the background worker",
                logging.WARNING,
            )
            self.kill_group()
            self.proc.wait()
            return 1
        self.kill_group()
        return 0

    def run(self) -> int:
        self.install_signals()
        delay: float | None = None
        while not self.stopping:
            started = time.monotonic()
            self.start()
            code = self.wait()
            if self.stopping:
                break
            ran_for = time.monotonic() - started
            self.kill_group()
            delay = next_delay(delay, ran_for)
            self.restarts += 1
            where = f" — its log: {self.log_path}" if self.log_path else ""
            self.say(
                f"threadless: the background worker died ({describe_exit(code)}, after "
                f"{ran_for:.0f}s); restarting it in {delay:.0f}s (restart {self.restarts}){where}",
                logging.CRITICAL,
            )
            deadline = time.monotonic() + delay
            while not self.stopping and time.monotonic() < deadline:
                time.sleep(0.1)
        return self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m threadless_site.supervise",
        description="Run the background worker and restart it when it dies.",
    )
    parser.add_argument("--log", help="append the worker's output (and the supervisor's lines) to this file")
    parser.add_argument(
        "--stop-seconds",
        type=float,
        default=20,
        help="after SIGTERM, how long the worker may take before it is killed (default 20)",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    sys.exit(Supervisor(command, log_path=args.log, stop_seconds=args.stop_seconds).run())


if __name__ == "__main__":
    main()
