"""Threadless's own errors under /v1/openai/ and /v1/anthropic/ answer in the provider's shape."""

from __future__ import annotations

import orjson
import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_a_bad_key_on_the_anthropic_route_is_anthropics_authentication_error():
    answer = Client().post(
        "/v1/anthropic/v1/messages",
        b"{}",
        content_type="application/json",
        headers={"x-api-key": "tl_proj_nope"},
    )
    assert answer.status_code == 401
    body = orjson.loads(answer.content)
    assert body["type"] == "error" and set(body["error"]) == {"type", "message"}
    assert body["error"]["type"] == "authentication_error"
    assert answer["X-Request-Id"].startswith("req_")


def test_a_body_over_the_limit_is_a_413_in_each_providers_shape(cast, settings):
    settings.THREADLESS_MAX_BODY_BYTES = 100
    big = orjson.dumps({"input": "x" * 200})
    headers = {"Authorization": f"Bearer {cast.key_a}"}
    openai = Client().post("/v1/openai/responses", big, content_type="application/json", headers=headers)
    assert (
        openai.status_code == 413 and orjson.loads(openai.content)["error"]["type"] == "invalid_request_error"
    )
    claude = Client().post("/v1/anthropic/v1/messages", big, content_type="application/json", headers=headers)
    assert claude.status_code == 413 and orjson.loads(claude.content)["error"]["type"] == "request_too_large"


def test_an_unknown_path_names_the_routes_the_proxy_serves(cast):
    answer = Client().get("/v1/anthropic/v1/models", headers={"x-api-key": cast.key_a})
    assert answer.status_code == 404
    error = orjson.loads(answer.content)["error"]
    assert error["type"] == "not_found_error" and "/v1/messages" in error["message"]


def test_other_v1_routes_keep_threadless_error_shape():
    answer = Client().get("/v1/memories")
    assert answer.status_code == 401 and set(orjson.loads(answer.content)["error"]) >= {
        "code",
        "hint",
        "request_id",
    }
