"""What every part of the load bench shares: where its files go, the databases it uses, the
workload's sizes, and its log line."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from bench.common import ROOT

VAR = Path(os.environ.get("BENCH_LOAD_VAR") or ROOT / "var" / "bench-load")
PG_ADMIN = os.environ.get("BENCH_PG_ADMIN", "postgres://root@127.0.0.1:5432/postgres")
PG_DB = os.environ.get("BENCH_LOAD_DB", "load_bench")
REDIS = os.environ.get("BENCH_REDIS", "redis://127.0.0.1:6379")
# The Redis dbs of the PostgreSQL + Redis stack: counters and cache, then the Celery broker.
REDIS_DBS = [int(n) for n in os.environ.get("BENCH_REDIS_DBS", "10,11").split(",")]
HISTORY = 200  # messages in every memory a client works on
# Memories beyond the budget: decorate at a budget the HISTORY messages exceed, so recall runs (and,
# with embeddings on, embeds the query), on two projects of the same server: embeddings local (the
# default) and off.
BEYOND_BUDGET = 600
BEYOND_CLIENTS = 16

_T0 = time.time()


def log(*parts) -> None:
    print(f"[bench-load {time.time() - _T0:5.0f} s]", *parts, file=sys.stderr, flush=True)
