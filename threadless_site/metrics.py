"""GET /metrics: the Prometheus text exposition of every process (common.metrics) plus the
outbox's backlog read now. Off the public API: only with `Authorization: Bearer
<THREADLESS_METRICS_TOKEN>` (compared in constant time), and a 404 while that setting is unset."""

from __future__ import annotations

import hmac
import logging

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpResponse
from django.views.decorators.http import require_GET

from common import metrics
from memories import selectors

log = logging.getLogger("threadless.metrics")


def _backlog() -> list[tuple[str, str, float]]:
    """The outbox gauges; none when the database cannot be read (the process metrics still answer)."""
    try:
        backlog = selectors.outbox_backlog()
    except DatabaseError as exc:
        log.warning("metrics: outbox backlog not read (%s)", exc.__class__.__name__)
        return []
    return [
        ("threadless_outbox_depth", "Outbox rows waiting for the worker.", backlog.depth),
        (
            "threadless_outbox_oldest_age_seconds",
            "Age of the oldest waiting outbox row (the worker's lag).",
            backlog.oldest_age_seconds,
        ),
    ]


@require_GET
def metrics_view(request):
    wanted = settings.THREADLESS_METRICS_TOKEN
    if not wanted:
        return HttpResponse("Not found.\n", status=404, content_type="text/plain")
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer":
        given = ""
    if not hmac.compare_digest(given.strip().encode(), wanted.encode()):
        response = HttpResponse("A metrics token is required.\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    body, content_type = metrics.exposition(_backlog)
    return HttpResponse(body, content_type=content_type)
