"""JSON log lines (common.logs): one object per line with the request's fields, after redaction."""

from __future__ import annotations

import io
import json
import logging

from common import logformat, logs
from common.redaction import RedactingFilter


def json_logger(stream: io.StringIO) -> logging.Logger:
    """A logger wired as settings.LOGGING wires the console handler under THREADLESS_LOG_FORMAT=json."""
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter())
    handler.addFilter(logs.ContextFilter())
    handler.setFormatter(logformat.JsonFormatter())
    logger = logging.getLogger("tests.json_lines")
    logger.handlers = [handler]
    logger.propagate = False
    logger.setLevel(logging.INFO)
    return logger


def test_a_json_line_carries_the_request_context_and_a_redacted_message():
    stream = io.StringIO()
    logger = json_logger(stream)
    token = logs.start("req_0123456789abcdef", "v1/memories/<str:memory_id>/facts")
    try:
        logs.bind(project_id="prj_abc")
        logger.warning("upstream refused api_key=%s", "sk-live-1234567890abcdef1234")
    finally:
        logs.end(token)
    logger.info("outside a request")
    first, second = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert first["level"] == "WARNING" and first["logger"] == "tests.json_lines"
    assert first["request_id"] == "req_0123456789abcdef" and first["project_id"] == "prj_abc"
    assert first["route"] == "v1/memories/<str:memory_id>/facts"
    assert "sk-live-1234567890abcdef1234" not in first["message"] and "api_key=" in first["message"]
    assert "request_id" not in second and second["message"] == "outside a request"


def test_a_traceback_is_one_json_field_redacted_like_the_message():
    stream = io.StringIO()
    logger = json_logger(stream)
    try:
        raise RuntimeError("token=ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    except RuntimeError:
        logger.exception("failed")
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    line = json.loads(lines[0])
    assert (
        "RuntimeError" in line["exception"]
        and "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in line["exception"]
    )


def test_the_request_line_has_the_duration_and_status():
    stream = io.StringIO()
    handler = json_logger(stream).handlers[0]
    logs.request_log.addHandler(handler)
    level = logs.request_log.level
    logs.request_log.setLevel(logging.INFO)
    try:
        logs.request_done(route="healthz", method="GET", status=200, seconds=0.0123)
    finally:
        logs.request_log.removeHandler(handler)
        logs.request_log.setLevel(level)
    line = json.loads(stream.getvalue())
    assert line["logger"] == "threadless.request" and line["status"] == 200 and line["method"] == "GET"
    assert line["duration_ms"] == 12.3 and line["route"] == "healthz"
