"""bench.load.cpu's /proc CPU readers (the server's and the database side's CPU per turn), on the
test's own child process: run in a child because tests and bench never import each other."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import json, os, subprocess, sys
from bench.load.cpu import db_cpu, proc_stats, title, tree_cpu

def own():
    t = os.times()
    return t.user + t.system

me = os.getpid()
before, own_before = tree_cpu(me), own()
while own() < own_before + 0.3:  # burn 0.3 s of CPU, by the CPU clock
    pass
after, own_after = tree_cpu(me), own()
gone = subprocess.Popen([sys.executable, "-c", "pass"])
gone.wait()
print(json.dumps({"stat": proc_stats()[me], "ppid": os.getppid(), "before": before, "after": after,
                  "own_before": own_before, "own_after": own_after, "gone_cpu": tree_cpu(gone.pid),
                  "gone_title": title(gone.pid), "title": title(me), "db": db_cpu("no_such_database")}))
"""


def _child() -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_proc_cpu_follows_the_process_own_clock_and_skips_a_vanished_pid():
    r = _child()
    comm, parent, ticks = r["stat"]
    assert comm.startswith("python") and parent == r["ppid"] and ticks > 0
    tick = 1 / os.sysconf("SC_CLK_TCK")
    # /proc and os.times() read the same kernel counters: equal to the tick (a little more for the
    # grandchild's exit, which tree_cpu does not count once reaped).
    assert abs(r["before"] - r["own_before"]) <= 2 * tick + 0.02
    assert abs(r["after"] - r["own_after"]) <= 2 * tick + 0.02
    assert r["after"] - r["before"] >= 0.3 - 2 * tick
    assert r["gone_cpu"] == 0.0 and r["gone_title"] == []
    assert "-c" in r["title"]


def test_db_cpu_reports_both_sides_as_non_negative_seconds():
    db = _child()["db"]
    assert set(db) == {"postgres", "redis"}
    assert all(isinstance(v, float) and v >= 0 for v in db.values())
