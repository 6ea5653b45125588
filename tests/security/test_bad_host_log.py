"""A request with a Host header outside ALLOWED_HOSTS is answered 400 and logged in one line, not
with Django's traceback: an outsider can send as many as they like."""

from __future__ import annotations

import io
import logging

import pytest
from django.conf import settings

from common.redaction import OneLineFilter


@pytest.fixture
def security_log():
    logger = logging.getLogger("django.security.DisallowedHost")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter(settings.LOGGING["formatters"]["plain"]["format"]))
    logger.addHandler(handler)
    try:
        yield stream
    finally:
        logger.removeHandler(handler)


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/healthz", "/v1/memories", "/console/"])
def test_a_bad_host_header_is_a_400_and_one_log_line(client, security_log, path):
    response = client.get(path, HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert b"Traceback" not in response.content
    lines = security_log.getvalue().splitlines()
    assert len(lines) == 1, lines
    assert "evil.example" in lines[0] and "DisallowedHost" in lines[0]


def test_the_filter_drops_the_traceback_and_keeps_the_message():
    try:
        raise ValueError("boom")
    except ValueError as exc:
        record = logging.LogRecord(
            "x", logging.ERROR, __file__, 1, "bad host %s", ("h",), (type(exc), exc, None)
        )
    assert OneLineFilter().filter(record) is True
    assert record.exc_info is None and record.getMessage() == "bad host h"
    assert "Traceback" not in logging.Formatter().format(record)
