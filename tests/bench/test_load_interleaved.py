"""bench.load's interleaved blocks (the share of the floor at 16 clients): the pair-ratio math on
fixed blocks, and a tiny real run of two instances of the SQLite floor against each other. Both
through a child process (`python -m bench.load`): tests and bench never import each other."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench_load(*args: str, stdin: str = "", env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _block(pair: int, side: str, turns: int, seconds: float) -> dict:
    return {"pair": pair, "side": side, "turns": turns, "seconds": seconds}


def test_pair_math_takes_the_median_and_range_of_the_pair_ratios_and_pools_the_turns():
    blocks = [
        _block(0, "floor", 1000, 2.0),
        _block(0, "product", 600, 2.0),  # 0.6
        _block(1, "product", 500, 2.5),
        _block(1, "floor", 1000, 2.5),  # 0.5
        _block(2, "floor", 800, 2.0),
        _block(2, "product", 560, 2.0),  # 0.7
        _block(3, "product", 300, 1.0),
        _block(3, "floor", 400, 1.0),  # 0.75
        _block(4, "floor", 0, 2.0),
        _block(4, "product", 10, 2.0),  # the floor served nothing: left out
        _block(5, "floor", 900, 2.0),  # no product block: left out
    ]
    # CPU per turn on two pairs only: the CPU share is theirs (server + PostgreSQL, floor ÷ product)
    blocks[0].update(cpu_ms=1.0, pg_cpu_ms=0.5)
    blocks[1].update(cpu_ms=2.0, pg_cpu_ms=1.0)  # 1.5 / 3.0 = 0.5
    blocks[2].update(cpu_ms=4.0)
    blocks[3].update(cpu_ms=1.0)  # 1.0 / 4.0 = 0.25
    out = json.loads(_bench_load("--pair-math", "--pairs", "4", stdin=json.dumps(blocks)).stdout)
    assert out["cpu"] == {"pairs": 2, "ratios": [0.5, 0.25], "median": 0.375, "min": 0.25, "max": 0.5}
    summary = out["summary"]
    assert summary["pairs"] == 4
    assert summary["ratios"] == [0.6, 0.5, 0.7, 0.75]
    assert summary["median"] == pytest.approx(0.65) and summary["min"] == 0.5 and summary["max"] == 0.75
    # pooled: (600 + 500 + 560 + 300) / 7.5 s ÷ (1000 + 1000 + 800 + 400) / 7.5 s
    assert summary["pooled"] == pytest.approx(1960 / 3200)
    assert out["schedule"] == [
        [0, "floor"],
        [0, "product"],
        [1, "product"],
        [1, "floor"],
        [2, "floor"],
        [2, "product"],
        [3, "product"],
        [3, "floor"],
    ]


def test_pair_math_with_no_complete_pair_reports_none():
    out = json.loads(_bench_load("--pair-math", stdin=json.dumps([_block(0, "floor", 10, 1.0)])).stdout)
    assert out["summary"] == {"pairs": 0, "ratios": []}


def test_a_tiny_interleaved_run_of_the_floor_against_itself_measures_every_block(tmp_path):
    done = _bench_load(
        "--stacks",
        "floor-sqlite",
        "--no-sequential",
        "--interleave",
        "floor-sqlite:floor-sqlite",
        "--pairs",
        "2",
        "--block",
        "0.4",
        "--warm",
        "0.2",
        "--interleave-clients",
        "2",
        "--workers",
        "1",
        "--no-doc",
        "--servers",
        "none",
        env={"BENCH_LOAD_VAR": str(tmp_path)},
    )
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["stacks"] == {}  # --no-sequential
    run = results["interleaved"]["floor-sqlite-b"]
    blocks = run["blocks"]
    assert [(b["pair"], b["side"]) for b in blocks] == [
        (0, "floor"),
        (0, "product"),
        (1, "product"),
        (1, "floor"),
    ]
    for b in blocks:
        assert b["clients"] == 2 and b["turns"] > 0 and b["errors"] == 0
        assert b["cpu_ms"] > 0 and b["gen_cpu_ms"] > 0 and "pg_cpu_ms" not in b  # SQLite: no PostgreSQL side
        assert 0 < b["gen_share"] <= 1.05 and 0 < b["busy_share"] <= 1.05
        assert 0.3 <= b["seconds"] < 5 and b["idle_cpu_s"] >= 0  # the other server's CPU meanwhile
    ratios = []
    for pair in (0, 1):
        rate = {b["side"]: b["turns"] / b["seconds"] for b in blocks if b["pair"] == pair}
        ratios.append(rate["product"] / rate["floor"])
    share = run["share"]
    assert share["pairs"] == 2 and share["ratios"] == ratios
    assert share["median"] == statistics.median(ratios) and share["min"] == min(ratios)
    assert run["floor_side"]["blocks"] == run["product_side"]["blocks"] == 2
    assert run["floor_side"]["errors"] == run["product_side"]["errors"] == 0
    # The section shows the share.
    assert "(a second instance) (2 clients) | 2 pairs × 0.4 s |" in done.stdout
    assert f"**{share['median']:.0%}**" in done.stdout
