"""Fixtures for the /v1 memory API tests: the cast plus a populated memory of project A."""

from __future__ import annotations

import pytest

from memories import services
from memories.models import Memory


@pytest.fixture
def memory_a(cast) -> Memory:
    memory, _ = services.memory_create(project=cast.project_a, metadata={"user": "42"})
    return memory


@pytest.fixture
def memory_b(cast) -> Memory:
    memory, _ = services.memory_create(project=cast.project_b, metadata={"user": "42"})
    return memory


def post(client, path, body, **headers):
    return client.post(path, body, format="json", **{f"HTTP_{k.upper().replace('-', '_')}": v
                                                      for k, v in headers.items()})


def decorate(client, memory_id, messages, **body):
    return post(client, f"/v1/memories/{memory_id}/decorate", {"messages": messages, **body})


def report(client, memory_id, messages, **body):
    return post(client, f"/v1/memories/{memory_id}/report", {"messages": messages, **body})


def error_of(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "hint", "request_id", "retryable"}
    assert body["error"]["code"] == code
    assert body["error"]["request_id"] == response["X-Request-Id"]
    return body["error"]
