"""What a log line knows about the request it was written in.

`bind()` puts the request's id, route pattern and project on a context variable (set by the
request middleware, the hot routes and key authentication); `ContextFilter` copies them onto
every record, and `common.logformat.JsonFormatter` (THREADLESS_LOG_FORMAT=json) writes one object
per line.
Both run after `common.redaction.RedactingFilter` in settings.LOGGING, so a JSON line carries
the same redacted message a plain line does. `request_done()` is the one place a finished
request is counted (common.metrics) and, when THREADLESS_REQUEST_LOG is on, logged.
"""

from __future__ import annotations

import contextvars
import logging

from common import metrics
from common.logformat import FIELDS

_context: contextvars.ContextVar[dict | None] = contextvars.ContextVar("threadless_request", default=None)
request_log = logging.getLogger("threadless.request")


def bind(**values) -> None:
    """Add to the current request's context (a new context when there is none yet)."""
    current = _context.get()
    if current is None:
        _context.set(dict(values))
    else:
        current.update(values)


def start(request_id: str, route: str) -> contextvars.Token:
    return _context.set({"request_id": request_id, "route": route})


def end(token: contextvars.Token) -> None:
    _context.reset(token)


def request_done(*, route: str, method: str, status: int, seconds: float) -> None:
    metrics.request(route, method, status, seconds)
    if request_log.isEnabledFor(logging.INFO):
        method = method[:16]  # any token a client sent
        request_log.info(
            "%s %s %s",
            method,
            route,
            status,
            extra={
                "route": route,
                "status": status,
                "method": method,
                "duration_ms": round(seconds * 1000, 2),
            },
        )


class ContextFilter(logging.Filter):
    """The request's id, project and route on every record written while it runs."""

    def filter(self, record: logging.LogRecord) -> bool:
        current = _context.get()
        for name in FIELDS:
            if not hasattr(record, name):
                setattr(record, name, current.get(name) if current else None)
        return True
