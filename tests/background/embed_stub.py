"""A real local `/v1/embeddings` server (127.0.0.1, a real socket) with a tiny, deterministic
"meaning": words of one concept share a dimension (dog, beagle, puppy → the same one), every
other word gets a hashed dimension. Enough for a paraphrase with no word in common to be near.
Records every request body (and the client's address: one per connection), so tests can check
what was embedded and how it was sent. `delay` (seconds) holds each answer back."""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONCEPTS = [
    {"dog", "dogs", "beagle", "puppy", "pup", "hound", "called", "named", "name"},
    {"cat", "cats", "kitten", "tabby"},
    {"car", "vehicle", "sedan", "drive"},
    {"doctor", "dentist", "appointment", "clinic"},
]
DIM = 64


def vector(text: str) -> list[float]:
    out = [0.0] * DIM
    for word in re.findall(r"[a-z]+", text.lower()):
        for i, concept in enumerate(CONCEPTS):
            if word in concept:
                out[i] += 1.0
                break
        else:
            out[len(CONCEPTS) + int(hashlib.md5(word.encode()).hexdigest(), 16) % (DIM - len(CONCEPTS))] += 0.3
    norm = math.sqrt(sum(x * x for x in out)) or 1.0
    return [x / norm for x in out]


class EmbeddingsStub:
    def __init__(self, status: int = 200, delay: float = 0.0):
        self.requests: list[dict] = []
        self.status = status
        self.delay = delay
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            wbufsize = 1 << 16  # the answer leaves in one write (flushed after each request), not head and body apart

            def log_message(self, *args):
                pass

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw or b"{}")
                stub.requests.append({"path": self.path, "body": body, "client": self.client_address,
                                      "authorization": self.headers.get("Authorization")})
                time.sleep(stub.delay)
                if stub.status != 200 or self.path != "/v1/embeddings":
                    answer, status = b'{"error": {"message": "down"}}', stub.status if stub.status != 200 else 404
                else:
                    data = [{"object": "embedding", "index": i, "embedding": vector(t)}
                            for i, t in enumerate(body["input"])]
                    answer, status = json.dumps({"object": "list", "data": data, "model": body["model"]}).encode(), 200
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer)))
                    self.end_headers()
                    self.wfile.write(answer)
                except (BrokenPipeError, ConnectionResetError):  # the client stopped waiting (a timeout)
                    self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def inputs(self) -> list[str]:
        return [t for r in self.requests for t in r["body"].get("input", [])]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
