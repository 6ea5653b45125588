"""The body limit holds while the body is read (a real uvicorn, a raw socket).

The attacker sends a 30 MB body with no key, slowly, in chunks. The 413 must come back while the
attacker is still sending, so the server never reads (or spools) the rest.
"""

from __future__ import annotations

import json
import select
import socket
import time

import pytest

pytestmark = pytest.mark.services

LIMIT = 1024 * 1024
TOTAL = 30 * 1024 * 1024
CHUNK = 64 * 1024


def _port(server) -> int:
    return int(server.url.rsplit(":", 1)[1])


def _read_response(sock: socket.socket, already: bytes) -> bytes:
    """Read until the JSON body announced by Content-Length is complete (or the peer closes)."""
    data = already
    sock.setblocking(True)
    sock.settimeout(30)
    while True:
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep:
            length = next(
                (
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")[1:]
                    if line.lower().startswith(b"content-length:")
                ),
                None,
            )
            if length is not None and len(body) >= length:
                return data
        try:
            more = sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            return data
        if not more:
            return data
        data += more


def _error_of(raw: bytes) -> tuple[int, dict]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)


def send_chunked_slowly(port: int, path: str, *, headers: str = "") -> tuple[int, dict, int]:
    """(status, JSON body, bytes of body sent when the answer arrived)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        sock.sendall(
            (
                f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Transfer-Encoding: chunked\r\n{headers}\r\n"
            ).encode()
        )
        sent, received = 0, b""
        frame = f"{CHUNK:x}\r\n".encode() + b"x" * CHUNK + b"\r\n"
        sock.setblocking(False)
        deadline = time.monotonic() + 120  # a bound on waiting, not a timing assertion
        while sent < TOTAL and time.monotonic() < deadline:
            readable, writable, _ = select.select([sock], [sock], [], 5)
            if readable:
                try:
                    more = sock.recv(65536)
                except ConnectionResetError:
                    more = b""
                received += more
                if not more or b"\r\n\r\n" in received:
                    break
                continue
            if writable:
                try:
                    sock.sendall(frame)
                except (BrokenPipeError, ConnectionResetError, BlockingIOError):
                    break
                sent += CHUNK
                time.sleep(0.002)  # slowly: a trickle, as an attacker holding the server would send
        status, body = _error_of(_read_response(sock, received))
        return status, body, sent
    finally:
        sock.close()


def test_a_slow_chunked_30_mb_body_without_a_key_gets_413_before_it_is_sent(live_server_proc):
    status, body, sent = send_chunked_slowly(_port(live_server_proc), "/v1/memories")
    assert status == 413
    assert body["error"]["code"] == "payload_too_large"
    assert body["error"]["request_id"].startswith("req_") and body["error"]["retryable"] is False
    assert LIMIT < sent < TOTAL, f"the answer came after {sent} of {TOTAL} bytes"


def test_the_guard_also_covers_the_routes_outside_v1(live_server_proc):
    for path in ("/manage/login/", "/chat/nobody/", "/healthz"):
        status, body, sent = send_chunked_slowly(
            _port(live_server_proc), path, headers="X-Request-Id: req_attack_0001\r\n"
        )
        assert status == 413, path
        assert body["error"]["code"] == "payload_too_large"
        assert body["error"]["request_id"] == "req_attack_0001"
        assert sent < TOTAL, path


def test_a_too_large_content_length_is_refused_before_any_body_byte_is_sent(live_server_proc):
    sock = socket.create_connection(("127.0.0.1", _port(live_server_proc)), timeout=30)
    try:
        sock.sendall(
            (
                f"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                f"Content-Length: {TOTAL}\r\n\r\n"
            ).encode()
        )
        # Not one byte of the body goes out: the answer must come from the headers alone.
        status, body = _error_of(_read_response(sock, b""))
    finally:
        sock.close()
    assert status == 413
    assert body["error"]["code"] == "payload_too_large"


def test_a_chunked_body_under_the_limit_still_goes_through(live_server_proc):
    with live_server_proc.client() as client:
        memory = client.post("/memories", json={}).json()["id"]
        body = json.dumps({"messages": [{"role": "user", "content": "x" * (LIMIT // 2)}]}).encode()
        response = client.post(
            f"/memories/{memory}/decorate",
            content=iter([body[:1000], body[1000:]]),
            headers={"Content-Type": "application/json"},
        )
    assert response.status_code == 200, response.text
