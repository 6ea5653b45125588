"""The JSON line format (THREADLESS_LOG_FORMAT=json), with nothing of Django: the web servers' and
the worker's supervisor's first lines (scripts/log-json.json, threadless_site.supervise) are
written before Django is loaded, and they take the same format as every later line.

`JsonFormatter` writes one object per line: timestamp, level, logger, message, the request's
fields when written during one (common.logs.ContextFilter puts them on the record), the duration
and status of a request line, and the (already redacted) traceback if any.
"""

from __future__ import annotations

import datetime
import logging

import orjson

FIELDS = ("request_id", "project_id", "route")


class JsonFormatter(logging.Formatter):
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


def json_line(logger: str, level: int, message: str) -> str:
    """One line in this format, for a program that writes its few lines without a logger."""
    record = logging.LogRecord(logger, level, "", 0, message, None, None)
    return JsonFormatter().format(record)
