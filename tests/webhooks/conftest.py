"""A real local receiver (a socket and a thread) that records what it is sent and answers the
statuses a test scripts, and an endpoint of project A pointing at it."""

from __future__ import annotations

import threading
from collections import deque
from http.server import ThreadingHTTPServer

import pytest

from harness.stubhttp import StubHandler
from webhooks import services


class Receiver:
    def __init__(self) -> None:
        self.requests: list[tuple[dict, bytes]] = []
        self.statuses: deque[int] = deque()
        receiver = self

        class Handler(StubHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                status = receiver.statuses.popleft() if receiver.statuses else 200
                answer = b'{"ok": false, "token": "sk-live-abcdefghijklmnopqrstuvwx"}'
                answer = answer if status >= 400 else b"ok"
                self.send_response(status)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def _loopback_egress(settings):
    # The receiver listens on loopback, which the egress policy refuses unless allowed.
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1"]


@pytest.fixture
def endpoint(cast, receiver):
    """Project A's endpoint at the receiver, for every event type, and its secret."""
    from webhooks.events import EVENT_TYPES

    return services.endpoint_create(project=cast.project_a, url=receiver.url, events=list(EVENT_TYPES))
