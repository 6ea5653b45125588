"""A real local HTTP stub server (real sockets) standing in for model providers and APIs.

Routes are set per test: a status, a JSON or text body, an optional delay, or a list of SSE
chunks (streamed one by one). Every request is recorded (path, headers, JSON body).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass
from http.server import ThreadingHTTPServer

from harness.stubhttp import StubHandler


@dataclass
class Route:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    delay: float = 0.0
    sse: list[str] | None = None  # raw SSE frames, sent one by one
    chunk_delay: float = 0.0


@dataclass
class Seen:
    method: str
    path: str
    headers: dict
    json: dict | None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Stub:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.requests: list[Seen] = []
        stub = self

        class Handler(StubHandler):
            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                path = self.path.split("?", 1)[0]
                stub.requests.append(Seen(self.command, self.path, dict(self.headers), body))
                route = stub.routes.get(path) or Route(status=404, body=b'{"error": "no route"}')
                if route.delay:
                    time.sleep(route.delay)
                if route.sse is not None:
                    self.send_response(route.status)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    for frame in route.sse:
                        try:
                            self.wfile.write(frame.encode())
                            self.wfile.flush()
                        except OSError:
                            return
                        if route.chunk_delay:
                            time.sleep(route.chunk_delay)
                    self.close_connection = True
                    return
                self.send_response(route.status)
                self.send_header("Content-Type", route.content_type)
                self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                self.wfile.write(route.body)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def set(
        self,
        path: str,
        *,
        status: int = 200,
        json_body=None,
        text: str | None = None,
        content_type: str | None = None,
        delay: float = 0.0,
        sse: list[str] | None = None,
        chunk_delay: float = 0.0,
    ) -> None:
        if json_body is not None:
            body, ctype = json.dumps(json_body).encode(), "application/json"
        else:
            body, ctype = (text or "").encode(), "text/plain"
        self.routes[path] = Route(
            status=status,
            body=body,
            content_type=content_type or ctype,
            delay=delay,
            sse=sse,
            chunk_delay=chunk_delay,
        )

    def openai_stream(
        self, path: str, pieces: list[str], *, chunk_delay: float = 0.0, tail: list[str] | None = None
    ):
        frames = [f"data: {json.dumps({'choices': [{'delta': {'content': p}}]})}\n\n" for p in pieces]
        frames += tail if tail is not None else ["data: [DONE]\n\n"]
        self.set(path, sse=frames, chunk_delay=chunk_delay)

    def anthropic_stream(self, path: str, pieces: list[str], *, tail: list[str] | None = None):
        frames = ['event: message_start\ndata: {"type": "message_start", "message": {}}\n\n']
        frames += [
            f"event: content_block_delta\ndata: "
            f"{json.dumps({'type': 'content_block_delta', 'delta': {'type': 'text_delta', 'text': p}})}\n\n"
            for p in pieces
        ]
        frames += tail if tail is not None else ['event: message_stop\ndata: {"type": "message_stop"}\n\n']
        self.set(path, sse=frames)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def refused_url() -> str:
    """A loopback URL nobody listens on (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
