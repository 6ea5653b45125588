"""Shared pieces of the benchmarks: the synthetic conversation, timing and statistics, and a
description of the machine. No Django here (the orchestrator imports it before any setup).
"""

from __future__ import annotations

import gc
import json
import os
import platform
import random
import sqlite3
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VAR = ROOT / "var" / "bench"
DOCS = ROOT / "docs"

SIZES = (100, 1_000, 10_000, 100_000)
BUDGET = 60_000

_WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
    "quebec romeo sierra tango uniform victor whiskey xray yankee zulu weather garden invoice meeting "
    "travel booking order refund shipping dog cat coffee tea library museum train flight hotel budget "
    "report summary schedule reminder birthday recipe pasta salad river mountain city country"
).split()


def _text(rng: random.Random, length: int = 200) -> str:
    words: list[str] = []
    size = 0
    while size < length:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)[:length].rstrip() + "."


def conversation(n: int, seed: int = 7) -> list[dict]:
    """`n` OpenAI-chat messages of ~200 characters: user/assistant turns, and every 10th
    assistant message a tool call followed by its tool result (then the assistant's reply)."""
    rng = random.Random(seed)
    out: list[dict] = []
    turn = 0
    while len(out) < n:
        out.append({"role": "user", "content": _text(rng)})
        if turn % 10 == 9:
            call_id = f"call_{turn}"
            args = json.dumps({"query": _text(rng, 40), "limit": 5})
            out.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"id": call_id, "type": "function", "function": {"name": "lookup", "arguments": args}}
                    ],
                }
            )
            out.append({"role": "tool", "tool_call_id": call_id, "content": _text(rng)})
        out.append({"role": "assistant", "content": _text(rng)})
        turn += 1
    del out[n:]
    return out


def new_user_message(i: int = 0) -> dict:
    return {"role": "user", "content": _text(random.Random(10_000 + i))}


def reply_message(i: int = 0) -> dict:
    return {"role": "assistant", "content": _text(random.Random(20_000 + i))}


def window_key(messages: list[dict]) -> list[tuple]:
    """What two systems must agree on: each message's role, text and tool linkage."""
    out = []
    for m in messages:
        calls = m.get("tool_calls") or []
        out.append(
            (
                m.get("role"),
                m.get("content") or "",
                m.get("tool_call_id") or "",
                tuple(c.get("id") for c in calls),
            )
        )
    return out


# --- timing ------------------------------------------------------------------------------------


def quantile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def summary(samples: list[float] | list[tuple[float, float]]) -> dict:
    """Milliseconds: wall-clock median and p95, n, and (for (wall, cpu) samples) the median CPU
    time of the calling thread — what the call costs without the wait for a core on a shared machine."""
    walls = [s[0] if isinstance(s, tuple) else s for s in samples]
    ms = [w * 1000 for w in walls]
    out = {"median": quantile(ms, 0.5), "p95": quantile(ms, 0.95), "n": len(ms)}
    if samples and isinstance(samples[0], tuple):
        out["cpu"] = quantile([s[1] * 1000 for s in samples], 0.5)
    return out


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, this thread's CPU seconds) of one call."""
    cpu = time.thread_time()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start, time.thread_time() - cpu


def interleaved(
    fns: dict[str, Callable[[], object]],
    *,
    warmup: int = 3,
    min_reps: int = 15,
    max_reps: int = 200,
    budget_s: float = 20.0,
) -> dict[str, list[tuple[float, float]]]:
    """Run every function once per round, round after round, so machine noise hits all of them
    alike; stop after `max_reps` rounds or when `budget_s` is spent (but never before `min_reps`)."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in fns}
    started = time.perf_counter()
    gc_was = gc.isenabled()
    for rnd in range(max_reps):
        # Collect between rounds, never inside a timed call (a full collection of a large heap
        # costs more than the calls themselves).
        gc.collect()
        gc.disable()
        try:
            for name, fn in fns.items():
                samples[name].append(timed(fn))
        finally:
            if gc_was:
                gc.enable()
        if rnd + 1 >= min_reps and time.perf_counter() - started > budget_s:
            break
    return samples


# --- the machine -------------------------------------------------------------------------------


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_gib() -> str:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    return "?"


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "-"


def _command(*args: str) -> str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "-"


def machine() -> dict:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0, 0, 0)
    pg = _command("psql", "-h", "127.0.0.1", "-d", "postgres", "-tAc", "SHOW server_version")
    redis = _command("redis-cli", "-h", "127.0.0.1", "INFO", "server")
    redis_version = next(
        (line.split(":", 1)[1] for line in redis.splitlines() if line.startswith("redis_version")), "-"
    )
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": _cpu(),
        "cores": os.cpu_count(),
        "memory": _mem_gib(),
        "load": f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}",
        "os": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "postgresql": pg.split()[0] if pg and pg != "-" else "-",
        "redis": redis_version.strip(),
        "packages": {
            name: _version(name)
            for name in (
                "Django",
                "djangorestframework",
                "uvicorn",
                "orjson",
                "psycopg",
                "httpx",
                "langgraph",
                "langgraph-checkpoint-sqlite",
                "langchain-core",
                "locust",
                "schemathesis",
                "matplotlib",
            )
        },
    }
