"""Load-balancer probes: /healthz (process up) and /readyz (database and broker reachable)."""

from django.db import connection
from django.http import JsonResponse

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
    response = JsonResponse({"status": "ok" if ok else "unavailable", "checks": checks}, status=200 if ok else 503)
    if not ok:
        response["Retry-After"] = "5"
    return response
