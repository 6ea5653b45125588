"""The background worker's liveness: a heartbeat it writes every few seconds, and what probes read.

The worker (`threadless_site.celery`) beats every `THREADLESS_WORKER_HEARTBEAT_SECONDS` from its
consumer's timer: in Redis when `REDIS_URL` is set (one key per deployment, so a worker on any
machine counts), otherwise in a file under the var dir (the embedded default runs on one
machine: its broker is a folder). The newest beat wins; the worker is `stale` when it is older
than `THREADLESS_WORKER_STALE_SECONDS` or there is none. `/healthz/worker`, `/readyz` and the
console's Overview read `worker_state()`.

Low level on purpose: no imports from the apps (it lives in `common/`).
"""

from __future__ import annotations

import json
import os
import socket
import time
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings

from common.broker import queue_stats
from common.counters import RedisCounters, deployment_tag, store

FILE_NAME = "worker-heartbeat.json"
REDIS_KEY = "tl:worker:heartbeat"


def _file() -> Path:
    return Path(settings.VAR_DIR) / FILE_NAME


def heartbeat_beat(*, hostname: str = "", at: float | None = None) -> None:
    """Record that the worker is alive now (or at `at`, epoch seconds)."""
    beat = json.dumps(
        {
            "at": time.time() if at is None else at,
            "hostname": hostname or socket.gethostname(),
            "pid": os.getpid(),
        }
    )
    counters = store()
    if isinstance(counters, RedisCounters):
        counters.client.set(f"{REDIS_KEY}:{deployment_tag()}", beat, ex=7 * 86400)
        return
    path = _file()
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(beat)
    os.replace(temporary, path)  # a reader sees the old beat or the new one, never half of one


def heartbeat_last() -> dict | None:
    """The newest beat ({"at": epoch seconds, "hostname", "pid"}), or None when none was written."""
    counters = store()
    try:
        if isinstance(counters, RedisCounters):
            raw = counters.client.get(f"{REDIS_KEY}:{deployment_tag()}")
        else:
            raw = _file().read_bytes()
    except FileNotFoundError:
        return None
    if not raw:
        return None
    try:
        beat = json.loads(raw)
        float(beat["at"])
    except (ValueError, KeyError, TypeError):
        return None
    return beat


def broker_queue() -> dict:
    """The task queue's depth and its oldest message's age (seconds) on the embedded broker;
    on another broker both are None (its own monitoring knows them better)."""
    options = (
        settings.CELERY_BROKER_TRANSPORT_OPTIONS
        if settings.CELERY_BROKER_URL.startswith(("threadless-fs://", "filesystem://"))
        else {}
    )
    if not options.get("data_folder_in"):
        return {"depth": None, "oldestAgeSeconds": None}
    return queue_stats(options["data_folder_in"], settings.CELERY_TASK_DEFAULT_QUEUE)


def worker_state() -> dict:
    """{"worker": "ok" | "stale", "lastHeartbeat", "ageSeconds", "staleAfterSeconds", "hostname",
    "queue": {"depth", "oldestAgeSeconds"}} — what /healthz/worker answers."""
    limit = settings.THREADLESS_WORKER_STALE_SECONDS
    try:
        beat = heartbeat_last()
        error = None
    except Exception as exc:  # noqa: BLE001 - the store is down: the beat is unknown, so stale
        beat, error = None, exc.__class__.__name__
    # Rounded before the comparison, so the age a probe reads always agrees with its verdict.
    age = round(max(0.0, time.time() - float(beat["at"])), 1) if beat else None
    state = {
        "worker": "ok" if age is not None and age <= limit else "stale",
        "lastHeartbeat": datetime.fromtimestamp(float(beat["at"]), UTC).isoformat() if beat else None,
        "ageSeconds": age,
        "staleAfterSeconds": limit,
        "hostname": str(beat.get("hostname", ""))[:200] if beat else None,
        "queue": broker_queue(),
    }
    if error:
        state["error"] = f"heartbeat store unreachable ({error})"
    return state
