"""A hostile upstream on a real local socket: it answers whatever a test set with `serve(...)`.

What it can send, each aimed at a reader that trusts its upstream:

* `gzip_bomb(decoded_mib)` — `Content-Encoding: gzip`, a small body that inflates to many MiB
  of a JSON string (255 KB of gzip is 256 MiB decoded);
* `big_json(mib)` — a valid chat completion (OpenAI shape) or embeddings answer whose text is
  that many MiB, sent with its length;
* `endless_line(mib)` — an event stream that never sends a blank line: `data: AAAA…` in 64 KiB
  writes until that many MiB went out or the peer closed.

Every request's path is recorded, and `sent` / `peer_closed` say how far a stream got before the
reader hung up (how a test sees that a reader stopped early instead of reading everything).
"""

from __future__ import annotations

import functools
import gzip
import json
import sys
import threading
from http.server import ThreadingHTTPServer

from harness.stubhttp import StubHandler

MiB = 1024 * 1024
WRITE = 64 * 1024


@functools.lru_cache(maxsize=4)
def gzip_bomb(decoded_mib: int) -> bytes:
    """A JSON string of `decoded_mib` MiB of spaces, gzipped: about 1/1000 of its size."""
    inner = (
        b'{"choices": [{"message": {"role": "assistant", "content": "' + b" " * (decoded_mib * MiB) + b'"}}]}'
    )
    return gzip.compress(inner, compresslevel=9)


def big_json(mib: float, *, kind: str = "chat") -> bytes:
    text = "x" * int(mib * MiB)
    if kind == "embeddings":
        return json.dumps({"data": [{"index": 0, "embedding": [0.5] * int(mib * MiB / 5)}]}).encode()
    return json.dumps(
        {
            "id": "chatcmpl-big",
            "object": "chat.completion",
            "model": "m",
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
            ],
        }
    ).encode()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a reader hanging up is the point
            super().handle_error(request, client_address)


class HostileUpstream:
    def __init__(self, port: int = 0) -> None:
        self.paths: list[str] = []
        self.sent = 0  # bytes of the last endless stream written before it ended
        self.peer_closed = threading.Event()
        self.answer: tuple[str, object] = ("json", b"{}")
        self.lock = threading.Lock()
        upstream = self

        class Handler(StubHandler):
            def _answer(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                with upstream.lock:
                    upstream.paths.append(self.path.split("?", 1)[0])
                    kind, value = upstream.answer
                if kind == "endless_line":
                    return self._endless(value)
                headers = {"Content-Type": "application/json"}
                if kind == "gzip":
                    headers["Content-Encoding"] = "gzip"
                self.send_response(200)
                for name, header in {**headers, "Content-Length": str(len(value))}.items():
                    self.send_header(name, header)
                self.end_headers()
                try:
                    self.wfile.write(value)
                except OSError:
                    upstream.peer_closed.set()

            do_GET = do_POST = _answer

            def _endless(self, mib: int):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                piece = b"data: " + b"A" * (WRITE - 6)
                sent = 0
                try:
                    self.wfile.write(piece[:6])
                    while sent < mib * MiB:
                        self.wfile.write(piece[6:] + b"A" * 6)
                        sent += WRITE
                        with upstream.lock:
                            upstream.sent = sent
                    self.wfile.flush()
                except OSError:
                    upstream.peer_closed.set()
                self.close_connection = True

        self.server = _Server(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def serve(self, kind: str, value: object) -> None:
        """`("gzip", gzip_bomb(256))`, `("json", big_json(30))` or `("endless_line", 32)`."""
        with self.lock:
            self.answer = (kind, value)
            self.sent = 0
            self.paths.clear()
        self.peer_closed.clear()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- what a reader cost ------------------------------------------------------------------------------


def _status_kib(pid: int | str, field: str) -> int:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


def peak_reset(pid: int | str = "self") -> int:
    """Start counting a process's peak resident memory afresh (Linux `clear_refs` 5); its RSS now, in
    bytes."""
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")
    return _status_kib(pid, "VmRSS") * 1024


def peak_rss(pid: int | str = "self") -> int:
    """The process's peak resident memory since the last `peak_reset`, in bytes."""
    return _status_kib(pid, "VmHWM") * 1024
