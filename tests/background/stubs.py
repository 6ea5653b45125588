"""A real local HTTP server speaking OpenAI chat completions, for the LLM extractor tests."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx


class OpenAIStub:
    """`reply(request_json) -> (status, body_dict)`; every request body is kept in `requests`."""

    def __init__(self, reply):
        self.reply = reply
        self.requests: list[dict] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                stub.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                status, payload = stub.reply(body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> OpenAIStub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def chat_reply(content: str) -> dict:
    return {"id": "chatcmpl-stub", "object": "chat.completion", "model": "stub",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]}


def http_complete(base_url: str, model: str = "stub-model"):
    """A `complete(messages) -> str` over real HTTP, for tests where providers is not present."""

    def complete(messages: list[dict]) -> str:
        response = httpx.post(base_url + "/chat/completions", json={"model": model, "messages": messages}, timeout=10)
        response.raise_for_status()
        return response.json()["choices"][0]["message"]["content"]

    return complete
