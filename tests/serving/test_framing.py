"""A body whose length is given two ways (Transfer-Encoding and Content-Length) is refused by the
ASGI entry before any view sees it (serving.framing)."""

from __future__ import annotations

import json

import pytest

from memories.api import hot
from serving.framing import ambiguous_length
from threadless_site import asgi

CHUNKED_BODY = b'{"messages": []}'


async def _post(path: str, headers: list) -> list[dict]:
    incoming = [{"type": "http.request", "body": CHUNKED_BODY, "more_body": False}]
    sent: list[dict] = []

    async def receive():
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "http_version": "1.1",
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 5),
        "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"), *headers],
    }
    await asgi.application(scope, receive, send)
    return sent


@pytest.mark.parametrize(
    "path",
    [
        "/v1/memories/mem_x/report",  # a hot route
        "/v1/memories",  # a sync view on the view threads
        "/v1/agents/agt_x/conversations",  # an async view on Django's ASGI handler
    ],
)
@pytest.mark.parametrize(
    "framing",
    [
        [(b"content-length", b"4"), (b"transfer-encoding", b"chunked")],
        [(b"Transfer-Encoding", b"gzip, chunked"), (b"Content-Length", b"16")],
    ],
)
async def test_a_request_with_both_transfer_encoding_and_content_length_is_a_400_no_view_sees(
    monkeypatch, path, framing
):
    async def no_app(scope, receive, send):
        raise AssertionError(f"{scope['path']} reached an application")

    monkeypatch.setattr(hot, "answer", lambda *a: pytest.fail("the hot handler ran"))
    monkeypatch.setattr(asgi, "sync_application", no_app)
    monkeypatch.setattr(asgi, "guarded_application", no_app)
    sent = await _post(path, [(b"x-request-id", b"req_smuggled1"), *framing])
    assert sent[0]["status"] == 400
    headers = dict(sent[0]["headers"])
    assert headers[b"connection"] == b"close" and headers[b"x-content-type-options"] == b"nosniff"
    error = json.loads(sent[1]["body"])["error"]
    assert error["code"] == "invalid_request" and error["request_id"] == "req_smuggled1"


def test_one_way_of_giving_the_length_is_not_ambiguous():
    assert not ambiguous_length({"headers": [(b"content-length", b"4")]})
    assert not ambiguous_length({"headers": [(b"transfer-encoding", b"chunked")]})
    assert not ambiguous_length({"headers": []})
    assert ambiguous_length({"headers": [(b"transfer-encoding", b"chunked"), (b"content-length", b"4")]})
