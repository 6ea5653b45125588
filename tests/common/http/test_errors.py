"""One error shape for everything under /v1 (SPEC 4.1)."""

from __future__ import annotations

import logging

import pytest

from common.errors import error_body
from tests.fixtures.api import error_of

from .boom_urls import SECRET


def test_an_unknown_path_under_v1_is_a_json_404(cast):
    for client in (cast.a, cast.api()):
        error = error_of(client.get("/v1/no/such/path"), 404, "not_found")
        assert error["retryable"] is False
        assert "/v1/docs" in error["hint"]
    error_of(cast.a.get("/v1/memories/mem_x/nothing-here"), 404, "not_found")


def test_a_wrong_method_is_a_405(cast, memory_a):
    error = error_of(cast.a.put("/v1/memories", {}, format="json"), 405, "method_not_allowed")
    assert "PUT" in error["message"]
    error_of(cast.a.get(f"/v1/memories/{memory_a.id}/decorate"), 405, "method_not_allowed")


def test_a_body_over_the_limit_is_a_413(cast, memory_a, settings):
    settings.THREADLESS_MAX_BODY_BYTES = 1000
    big = {"messages": [{"role": "user", "content": "x" * 2000}]}
    error = error_of(
        cast.a.post(f"/v1/memories/{memory_a.id}/decorate", big, format="json"), 413, "payload_too_large"
    )
    assert "1000 bytes" in error["message"]
    small = {"messages": [{"role": "user", "content": "x" * 100}]}
    assert cast.a.post(f"/v1/memories/{memory_a.id}/decorate", small, format="json").status_code == 200


def test_the_default_body_limit_is_one_mebibyte(cast, memory_a, settings):
    assert settings.THREADLESS_MAX_BODY_BYTES == 1024 * 1024
    overhead = len(b'{"messages":[{"role":"user","content":""}]}')
    just_fits = b'{"messages":[{"role":"user","content":"' + b"a" * (1024 * 1024 - overhead) + b'"}]}'
    assert len(just_fits) == 1024 * 1024
    response = cast.a.post(f"/v1/memories/{memory_a.id}/decorate", just_fits, content_type="application/json")
    assert response.status_code == 200
    too_big = just_fits[:-2] + b'a"}]}'
    error_of(
        cast.a.post(f"/v1/memories/{memory_a.id}/decorate", too_big, content_type="application/json"),
        413,
        "payload_too_large",
    )


def test_malformed_json_is_a_400_that_says_so(cast):
    error = error_of(
        cast.a.post("/v1/memories", b'{"metadata": ', content_type="application/json"), 400, "invalid_request"
    )
    assert "JSON" in error["message"]


def test_a_body_that_is_not_json_at_all_is_a_400(cast):
    error_of(
        cast.a.post("/v1/memories", b"metadata=1", content_type="application/x-www-form-urlencoded"),
        400,
        "invalid_request",
    )


@pytest.mark.urls("tests.common.http.boom_urls")
def test_an_unhandled_exception_is_a_500_internal_logged_with_the_request_id_and_no_traceback(cast, caplog):
    with caplog.at_level(logging.ERROR, logger="threadless.errors"):
        response = cast.a.get("/v1/test/boom/runtime")
    error = error_of(response, 500, "internal")
    assert error["retryable"] is True
    text = response.content.decode()
    for leak in ("Traceback", "RuntimeError", "kaboom", SECRET, 'File "'):
        assert leak not in text
    records = [r for r in caplog.records if error["request_id"] in r.getMessage()]
    assert records and records[0].exc_info is not None


@pytest.mark.urls("tests.common.http.boom_urls")
def test_an_exception_in_a_plain_django_view_under_v1_gets_the_same_shape(cast, caplog):
    with caplog.at_level(logging.ERROR, logger="threadless.errors"):
        response = cast.a.get("/v1/test/plain-boom")
    error = error_of(response, 500, "internal")
    assert SECRET not in response.content.decode()
    assert any(error["request_id"] in r.getMessage() for r in caplog.records)


@pytest.mark.urls("tests.common.http.boom_urls")
def test_a_django_validation_error_is_a_400_naming_the_field(cast):
    error = error_of(cast.a.get("/v1/test/boom/validation"), 400, "invalid_request")
    assert error["message"] == "when: Enter a valid date."


@pytest.mark.urls("tests.common.http.boom_urls")
def test_a_database_error_never_shows_its_sql(cast):
    response = cast.a.get("/v1/test/boom/database")
    error_of(response, 500, "internal")
    assert b"SELECT" not in response.content and b"duplicate key" not in response.content


@pytest.mark.urls("tests.common.http.boom_urls")
@pytest.mark.parametrize("kind", ["database-down", "redis-down"])
def test_an_unreachable_database_or_redis_is_a_503_unavailable_with_retry_after(cast, kind):
    response = cast.a.get(f"/v1/test/boom/{kind}")
    error = error_of(response, 503, "unavailable")
    assert error["retryable"] is True
    assert int(response["Retry-After"]) > 0
    assert b"127.0.0.1" not in response.content


def test_every_response_carries_a_request_id(cast, memory_a):
    for response in (
        cast.a.get(f"/v1/memories/{memory_a.id}"),
        cast.api().get("/v1/memories"),
        cast.a.get("/v1/nothing"),
        cast.api().get("/healthz"),
        cast.api().get("/manage/"),
        cast.api().get("/v1/openapi.json"),
    ):
        assert response["X-Request-Id"].startswith("req_")


def test_a_well_formed_incoming_request_id_is_echoed_and_a_bad_one_replaced(cast):
    assert cast.a.get("/v1/memories", HTTP_X_REQUEST_ID="trace-1234abcd")["X-Request-Id"] == "trace-1234abcd"
    assert cast.a.get("/v1/memories", HTTP_X_REQUEST_ID="<script>")["X-Request-Id"].startswith("req_")


@pytest.mark.parametrize("status", [400, 401, 404, 405, 408, 409, 413, 429, 500, 502, 503])
def test_retryable_is_true_exactly_for_408_429_and_5xx(status):
    body = error_body(code="x", message="m", hint="h", status=status, request_id="req_1")
    assert body["error"]["retryable"] is (status in (408, 429) or status >= 500)


def test_an_error_message_never_carries_a_secret(cast):
    error = error_of(cast.a.get("/v1/memories?cursor=sk-abcdefghijklmnopqrstu"), 400, "invalid_request")
    assert "sk-abcdefghijklmnopqrstu" not in error["message"]
