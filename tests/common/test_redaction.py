"""Redaction (SPEC 6.3): the one module behind digests, taskErrors, raw errors and the logs."""

from __future__ import annotations

import io
import json
import logging

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from common.redaction import (
    DIGEST_LIMIT,
    RedactingFilter,
    clean_reason,
    digest_text,
    provider_message,
    raw_error_text,
    redact_secrets,
)

PROJECT_KEY = "tl_proj_" + "Ab3dE6gH9j" + "K" * 32
PUBLISHABLE_KEY = "tl_pub_" + "Zy8xW7vU6t" + "q" * 32
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"


def test_a_url_becomes_url_and_the_task_prefix_is_never_touched():
    text = digest_text("eddi://ai.labs.llm", "POST https://api.openai.com/v1/chat/completions?x=1 failed")
    assert text == "Task 'eddi://ai.labs.llm' failed: POST [url] failed"


def test_a_host_only_url_and_a_www_link_both_become_url():
    assert clean_reason("see http://10.0.0.5:8080 or www.example.com/help") == "see [url] or [url]"


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-abcdefghijklmnop1234",
        "sk-ant-api03-abcdefghijklmnop",
        PROJECT_KEY,
        PUBLISHABLE_KEY,
        JWT,
    ],
)
def test_each_kind_of_bare_secret_is_redacted(secret):
    for text in (f"key {secret} was refused", f"({secret})", secret):
        out = redact_secrets(text)
        assert secret not in out
        assert "[redacted]" in out
        assert secret not in digest_text("t", text)
        assert secret not in raw_error_text(text)


def test_a_bearer_token_is_redacted_but_the_word_bearer_kept():
    out = redact_secrets("sent Authorization: Bearer abc.def-123_XYZ and failed")
    assert "abc.def-123_XYZ" not in out
    assert "failed" in out


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "apiKey",
        "api-key",
        "X-API-Key",
        "token",
        "access_token",
        "secret",
        "client_secret",
        "password",
        "passwd",
        "authorization",
    ],
)
@pytest.mark.parametrize(
    "shape",
    [
        "{name}=s3cr3tvalue99",
        "{name}: s3cr3tvalue99",
        '"{name}": "s3cr3tvalue99"',
        "'{name}': 's3cr3tvalue99'",
        "?{name}=s3cr3tvalue99&x=1",
    ],
)
def test_values_of_keys_named_like_credentials_are_redacted(name, shape):
    text = "request failed with " + shape.format(name=name) + " in it"
    out = redact_secrets(text)
    assert "s3cr3tvalue99" not in out
    assert "[redacted]" in out
    assert out.endswith("in it")


def test_an_authorization_header_with_a_basic_credential_is_redacted_whole():
    out = redact_secrets("Authorization: Basic dXNlcjpwYXNzd29yZA== rejected")
    assert "dXNlcjpwYXNzd29yZA" not in out
    assert out.endswith("rejected")


def test_ordinary_words_near_secret_names_survive():
    assert redact_secrets("the token limit was exceeded") == "the token limit was exceeded"
    assert redact_secrets("password reset failed") == "password reset failed"


def test_a_python_traceback_is_reduced_to_its_last_line():
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/weather.py", line 10, in fetch\n'
        "    response.raise_for_status()\n"
        '  File "/usr/lib/python3.11/site-packages/httpx/_models.py", line 761, in raise_for_status\n'
        "    raise HTTPStatusError(message, request=request, response=self)\n"
        "httpx.HTTPStatusError: Server error '503 Service Unavailable'\n"
    )
    text = digest_text("weather", trace)
    assert text == "Task 'weather' failed: Server error '503 Service Unavailable'"


def test_a_java_stack_trace_is_reduced_to_its_messages():
    trace = (
        "java.net.ConnectException: Connection refused\n"
        "\tat java.base/sun.nio.ch.Net.connect0(Native Method)\n"
        "\tat java.base/sun.nio.ch.Net.connect(Net.java:579)\n"
        "\tat ai.labs.eddi.HttpCalls.execute(HttpCalls.java:142)\n"
        "Caused by: java.io.IOException: socket closed\n"
        "\t... 12 more\n"
    )
    text = digest_text("ai.labs.httpcalls", trace)
    assert text == "Task 'ai.labs.httpcalls' failed: Connection refused socket closed"


@pytest.mark.parametrize(
    "raw,reason",
    [
        ("java.net.SocketTimeoutException: Read timed out", "Read timed out"),
        ("httpx.ConnectTimeout: timed out", "timed out"),
        ("openai.BadRequestError: bad model", "bad model"),
        ("requests.exceptions.ConnectionError: refused", "refused"),
        ("ValueError: plain class names stay", "ValueError: plain class names stay"),
    ],
)
def test_fully_qualified_exception_names_are_stripped(raw, reason):
    assert digest_text("t", raw) == f"Task 't' failed: {reason}"


@pytest.mark.parametrize(
    "body,message",
    [
        (
            {"error": {"message": "model 'x' not found", "type": "invalid_request_error"}, "message": "no"},
            "model 'x' not found",
        ),
        ({"message": "the message", "error": "the error", "detail": "the detail"}, "the message"),
        ({"error": {"code": 1}, "message": "falls to message"}, "falls to message"),
        ({"error": "the error", "detail": "the detail"}, "the error"),
        ({"detail": "the detail"}, "the detail"),
    ],
)
def test_a_provider_json_body_is_reduced_to_its_message_in_the_documented_order(body, message):
    raw = json.dumps(body)
    assert provider_message(raw) == message
    assert digest_text("eddi://ai.labs.llm", raw) == f"Task 'eddi://ai.labs.llm' failed: {message}"
    prefixed = "Chat model execution failed: " + raw
    assert digest_text("eddi://ai.labs.llm", prefixed) == (
        f"Task 'eddi://ai.labs.llm' failed: Chat model execution failed: {message}"
    )


def test_a_body_without_a_message_is_kept_as_text():
    assert provider_message('{"status": 500}') is None
    assert provider_message("not json") is None


def test_the_digest_is_capped_at_200_characters_with_the_ellipsis_inside():
    text = digest_text("weather", "x" * 500)
    assert len(text) == DIGEST_LIMIT
    assert text.endswith("…")
    exact = digest_text("w", "y" * (DIGEST_LIMIT - len("Task 'w' failed: ")))
    assert len(exact) == DIGEST_LIMIT and not exact.endswith("…")


def test_whitespace_is_collapsed():
    assert digest_text("t", "  a \n\n b\t\tc  ") == "Task 't' failed: a b c"


def test_the_raw_error_keeps_urls_and_class_names_but_not_secrets():
    raw = raw_error_text("java.net.ConnectException at https://pay.example.com/v1?api_key=abc123def456")
    assert "https://pay.example.com/v1" in raw
    assert "java.net.ConnectException" in raw
    assert "abc123def456" not in raw


secret_bodies = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=24, max_size=40
)
planted = st.one_of(
    secret_bodies.map(lambda s: "sk-" + s),
    secret_bodies.map(lambda s: "sk-ant-" + s),
    secret_bodies.map(lambda s: "tl_proj_" + (s + "0" * 42)[:42]),
    secret_bodies.map(lambda s: "tl_pub_" + (s + "0" * 42)[:42]),
    secret_bodies.map(lambda s: "Bearer " + s).map(lambda s: s),
    st.tuples(
        st.sampled_from(["api_key=", "token: ", "password=", '"secret": "', "authorization: "]), secret_bodies
    ).map(lambda t: t[0] + t[1]),
)


def _secret_part(planted_text: str) -> str:
    for sep in ("Bearer ", "=", ": ", '"'):
        if sep in planted_text and not planted_text.startswith(("sk-", "tl_")):
            return planted_text.rsplit(sep, 1)[1]
    return planted_text


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=300), planted, st.text(max_size=300), st.text(max_size=20))
def test_a_digest_never_exceeds_200_characters_nor_contains_a_planted_secret(before, secret, after, task):
    assume(_secret_part(secret) not in before + after)
    raw = f"{before} {secret} {after}"
    text = digest_text("task" + "".join(c for c in task if c.isalnum()), raw)
    assert len(text) <= DIGEST_LIMIT
    assert _secret_part(secret) not in text
    assert _secret_part(secret) not in raw_error_text(raw)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=1000))
def test_any_text_gives_a_digest_of_at_most_200_characters_with_its_prefix(raw):
    text = digest_text("weather", raw)
    assert len(text) <= DIGEST_LIMIT
    assert text.startswith("Task 'weather' failed: ")


def test_the_logging_filter_redacts_records_seen_by_any_handler(caplog):
    logger = logging.getLogger("threadless.tests.redaction")
    redacting = RedactingFilter()
    logger.addFilter(redacting)
    try:
        with caplog.at_level(logging.INFO, logger="threadless.tests.redaction"):
            logger.info("calling with %s and api_key=%s", "sk-live-abcdefghijklmnop", "hunter2hunter2")
            try:
                raise RuntimeError(f"boom {PROJECT_KEY}")
            except RuntimeError:
                logger.exception("failed")
    finally:
        logger.removeFilter(redacting)
    text = caplog.text
    assert "sk-live-abcdefghijklmnop" not in text
    assert "hunter2hunter2" not in text
    assert PROJECT_KEY not in text
    assert "[redacted]" in text


def test_the_configured_console_handler_carries_the_redacting_filter():
    handlers = [
        h for h in logging.getLogger().handlers if any(isinstance(f, RedactingFilter) for f in h.filters)
    ]
    assert handlers, "settings.LOGGING installs RedactingFilter on the console handler"
    handler = handlers[0]
    stream = io.StringIO()
    old = handler.setStream(stream)
    try:
        logging.getLogger("threadless.tests").warning("token=abcdef123456 leaked %s", "sk-abcdefghijklmnopqr")
    finally:
        handler.setStream(old)
    assert "abcdef123456" not in stream.getvalue()
    assert "sk-abcdefghijklmnopqr" not in stream.getvalue()
    assert "[redacted]" in stream.getvalue()


def test_a_json_body_inside_other_text_is_reduced_to_its_message():
    raw = (
        'weather-service: HTTP 503 {"error": {"message": "upstream overloaded"}} '
        "at com.example.weather.Client.fetch(Client.java:88) url=https://weather.example/v2?q=oslo"
    )
    assert digest_text("eddi://weather", raw) == (
        "Task 'eddi://weather' failed: weather-service: HTTP 503 upstream overloaded url=[url]"
    )
