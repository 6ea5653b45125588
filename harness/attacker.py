"""A local HTTP listener standing in for an attacker's host, on a second loopback address.

It records every request it receives (method, path with query, headers, body) and answers each
with one fixed reply (by default an OpenAI-shaped chat completion, so a client that reaches it
would look like it worked). A security test points something at it, performs the attack and
then asserts `received` is empty, or holds no secret. It listens on 127.0.0.2 (any 127/8
address is loopback on Linux), so the egress policy must allow that address for the attack to
get as far as connecting: a refusal seen in the test is then the defence under test, not the
default loopback rule.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import ThreadingHTTPServer

from harness.stubhttp import StubHandler

ADDRESS = "127.0.0.2"
COMPLETION = {
    "id": "chatcmpl-evil",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hello from the attacker."},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


@dataclass
class Received:
    method: str
    path: str
    headers: dict
    body: bytes

    def text(self) -> str:
        return json.dumps({"path": self.path, "headers": self.headers}) + self.body.decode("utf-8", "replace")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class AttackerListener:
    def __init__(self, address: str = ADDRESS) -> None:
        self.received: list[Received] = []
        self.lock = threading.Lock()
        self.reply_status = 200
        self.reply_type = "application/json"
        self.reply_body = json.dumps(COMPLETION).encode()
        listener = self

        class Handler(StubHandler):
            def _any(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with listener.lock:
                    listener.received.append(
                        Received(
                            self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                        )
                    )
                    status, kind, raw = listener.reply_status, listener.reply_type, listener.reply_body
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_PUT = do_DELETE = _any

        self.server = _Server((address, 0), Handler)
        self.host, self.port = self.server.server_address[:2]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def reply(self, body: bytes, *, content_type: str = "application/json", status: int = 200) -> None:
        with self.lock:
            self.reply_status, self.reply_type, self.reply_body = status, content_type, body

    def everything(self) -> str:
        """All that arrived, as one string (to search for a leaked secret)."""
        with self.lock:
            return "\n".join(r.text() for r in self.received)

    def reset(self) -> None:
        with self.lock:
            self.received.clear()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
