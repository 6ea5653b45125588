"""Probes: /healthz (process up) and /readyz (database and broker reachable) for load balancers,
/healthz/worker (the background worker's heartbeat is fresh) for monitors."""

from django.db import connection
from django.http import JsonResponse

from common.heartbeat import worker_state
from threadless_site.celery import app


def healthz(request):
    return JsonResponse({"status": "ok"})


def readyz(request):
    checks = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as exc:  # noqa: BLE001 - any failure means not ready
        checks["database"] = f"down: {exc.__class__.__name__}"
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
        checks["broker"] = "ok"
    except Exception as exc:  # noqa: BLE001
        checks["broker"] = f"down: {exc.__class__.__name__}"
    ok = all(v == "ok" for v in checks.values())
    # The worker's state is reported, never a reason to take this web process out of rotation:
    # it answers requests either way, and the outbox keeps the background work until a worker returns.
    worker = worker_state()
    body = {
        "status": "ok" if ok else "unavailable",
        "checks": checks,
        "worker": {k: worker[k] for k in ("worker", "lastHeartbeat", "ageSeconds", "staleAfterSeconds")},
    }
    response = JsonResponse(body, status=200 if ok else 503)
    if not ok:
        response["Retry-After"] = "5"
    return response


def healthz_worker(request):
    """200 while the worker's newest heartbeat is younger than THREADLESS_WORKER_STALE_SECONDS,
    503 {"worker": "stale", …} otherwise (also when none was ever written)."""
    state = worker_state()
    state.pop("hostname", None)  # an unauthenticated probe: no machine names
    response = JsonResponse(state, status=200 if state["worker"] == "ok" else 503)
    response["Cache-Control"] = "no-store"
    return response
