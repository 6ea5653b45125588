"""bench.load.report's memories-beyond-the-budget table: local's turns/s against off's in the same run, its
tail, beside the floor (run in a child: tests and bench never import each other)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
from bench.load.report import beyond_table

def side(turns_s, p50, p99):
    return {"turns_s": turns_s, "p50": p50, "p99": p99, "cpu_ms": 4.0, "errors": 0, "busy_share": 1.0}

results = {"stacks": {
    "floor-sqlite": {"turns": [{"clients": 16, "turns_s": 500.0}]},
    "embedded": {"label": "embedded", "beyond": {"budget": 600, "clients": 16,
                 "local": side(200.0, 50.0, 140.0), "off": side(300.0, 40.0, 90.0)}},
    "postgres": {"label": "postgres", "beyond": {"budget": 600, "clients": 16,
                 "local": side(100.0, 50.0, 200.0), "off": side(300.0, 40.0, 90.0)}},
}}
print("\\n".join(beyond_table(results)))
"""


def test_the_table_marks_local_against_off_and_its_tail():
    env = dict(os.environ)
    done = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    rows = {tuple(cell.strip() for cell in line.split("|")[1:3]): line for line in done.stdout.splitlines()}
    assert "| 0.67 ✅ |" in rows[("embedded", "local")] and "| 2.8× ✅ |" in rows[("embedded", "local")]
    assert "| 500 |" in rows[("embedded", "local")]  # the floor's 16 clients beside it
    assert "| 0.33 ❌ |" in rows[("postgres", "local")] and "| 4.0× ❌ |" in rows[("postgres", "local")]
    assert "| — |" in rows[("postgres", "off")]  # no floor measured for that stack
