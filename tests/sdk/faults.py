"""A fault-injection HTTP server on a real socket, standing in for Threadless.

Each request is answered by ``server.responder(request)``, which returns an action:

* ``Respond(status, body, headers)`` — a normal answer (``body`` bytes, or JSON-encoded if not);
* ``Hang(seconds)`` — read the request, then say nothing (until the server stops);
* ``DropMidBody()`` — send headers announcing a long body, part of it, then close the socket;
* ``Close()`` — close the connection without a byte;
* ``Drip(interval)`` — headers, then a body byte every ``interval`` seconds, never finishing.

Every request is recorded in ``server.requests`` (method, path, headers, JSON body).
"""

from __future__ import annotations

import json
import socket
import socketserver
import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Request:
    method: str
    path: str
    headers: dict
    body: Any


@dataclass
class Respond:
    status: int = 200
    body: Any = None
    headers: dict = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Hang:
    seconds: float = 30.0


@dataclass
class DropMidBody:
    pass


@dataclass
class Close:
    pass


@dataclass
class Drip:
    """Headers at once, then one byte of the body every ``interval`` seconds (each read succeeds)."""

    interval: float = 0.1


REASONS = {
    200: "OK",
    202: "Accepted",
    204: "No Content",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    408: "Request Timeout",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


def error_body(code: str, message: str, hint: str = "Do the thing.", request_id: str = "req_test") -> dict:
    return {
        "error": {
            "code": code,
            "message": message,
            "hint": hint,
            "request_id": request_id,
            "retryable": code in {"rate_limited", "internal", "unavailable"},
        }
    }


def echo_decorate(request: Request, context_text: str = "") -> Respond:
    """Answer like a Threadless server with an empty memory: own instructions + context, the new messages."""
    body = request.body or {}
    own = body.get("instructions") or ""
    instructions = own + "\n\n" + context_text if own and context_text else own or context_text
    messages = [m for m in body.get("messages", []) if m.get("role") != "system"]
    return Respond(
        200,
        {
            "memory_id": request.path.split("/")[3],
            "turn": 1,
            "instructions": instructions,
            "context_text": context_text,
            "messages": messages,
            "context": {},
            "usage": {},
        },
    )


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        server: FaultServer = self.server.owner  # type: ignore[attr-defined]
        while not server.stopping.is_set():
            line = self.rfile.readline()
            if not line:
                return
            method, path, _ = line.decode().split(" ", 2)
            headers = {}
            while True:
                h = self.rfile.readline().decode()
                if h in ("\r\n", "\n", ""):
                    break
                name, _, value = h.partition(":")
                headers[name.strip().lower()] = value.strip()
            raw = self.rfile.read(int(headers.get("content-length") or 0))
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw
            request = Request(method, path, headers, body)
            with server.lock:
                server.requests.append(request)
            action = server.responder(request)
            if isinstance(action, Hang):
                server.stopping.wait(action.seconds)
                return
            if isinstance(action, Close):
                return
            if isinstance(action, Drip):
                self.wfile.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
                )
                self.wfile.flush()
                while not server.stopping.wait(action.interval):
                    try:
                        self.wfile.write(b" ")
                        self.wfile.flush()
                    except OSError:
                        return
                return
            if isinstance(action, DropMidBody):
                self.wfile.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
                    b'{"memory_id": "mem_x", "instru'
                )
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if action.delay:
                server.stopping.wait(action.delay)
            payload = action.body
            if payload is None:
                payload = b""
            elif not isinstance(payload, bytes):
                payload = json.dumps(payload).encode()
            head = [
                f"HTTP/1.1 {action.status} {REASONS.get(action.status, 'Status')}",
                f"Content-Length: {len(payload)}",
                "X-Request-Id: req_test",
            ]
            if "content-type" not in {k.lower() for k in action.headers}:
                head.append("Content-Type: application/json")
            head += [f"{k}: {v}" for k, v in action.headers.items()]
            self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode() + payload)
            self.wfile.flush()


class _TCPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class FaultServer:
    def __init__(self, responder=None) -> None:
        self.responder = responder or echo_decorate
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self._server = _TCPServer(("127.0.0.1", 0), _Handler)
        self._server.owner = self  # type: ignore[attr-defined]
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def start(self) -> FaultServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def paths(self, method: str | None = None) -> list[str]:
        with self.lock:
            return [r.path for r in self.requests if method is None or r.method == method]

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
