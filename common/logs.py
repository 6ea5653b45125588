"""What a log line knows about the request it was written in, and the JSON line format.

`bind()` puts the request's id, route pattern and project on a context variable (set by the
request middleware, the hot routes and key authentication); `ContextFilter` copies them onto
every record, and `JsonFormatter` (THREADLESS_LOG_FORMAT=json) writes one object per line.
Both run after `common.redaction.RedactingFilter` in settings.LOGGING, so a JSON line carries
the same redacted message a plain line does. `request_done()` is the one place a finished
request is counted (common.metrics) and, when THREADLESS_REQUEST_LOG is on, logged.
"""

from __future__ import annotations

import contextvars
import datetime
import logging

import orjson

from common import metrics

_context: contextvars.ContextVar[dict | None] = contextvars.ContextVar("threadless_request", default=None)
request_log = logging.getLogger("threadless.request")

FIELDS = ("request_id", "project_id", "route")


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


class JsonFormatter(logging.Formatter):
    """One JSON object per line: timestamp, level, logger, message, the request's fields, the
    duration and status of a request line, and the (already redacted) traceback if any."""

    def format(self, record: logging.LogRecord) -> str:
        out = {
            "timestamp": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in (*FIELDS, "method", "status", "duration_ms"):
            value = getattr(record, name, None)
            if value is not None:
                out[name] = value
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            out["exception"] = record.exc_text
        return orjson.dumps(out, default=str).decode()
