"""Helpers for the two `make reliability` faults that need more than locust: a slow local HTTP
stub (so agent turns last long enough to be caught mid-turn by a SIGTERM), threads that talk to
an agent on it, and threads that use the Python SDK (decorate → report) throughout the faults."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

SLOW_SECONDS = 2.5


class _Slow(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        time.sleep(SLOW_SECONDS)
        body = json.dumps({"ok": True, "slept": SLOW_SECONDS}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


class SlowStub:
    """A real HTTP server on 127.0.0.1 answering every GET after SLOW_SECONDS."""

    def __init__(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class SlowTalkers:
    """Threads that each open a new conversation with the slow agent and say one thing, in a loop."""

    def __init__(self, url: str, key: str, agent_id: str, threads: int) -> None:
        self.url, self.agent_id, self.threads = url, agent_id, threads
        self.headers = {"Authorization": f"Bearer {key}"}
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.states: dict[str, int] = {}
        self.failed_requests = 0
        self.conversations: list[str] = []
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for _ in range(self.threads):
            t = threading.Thread(target=self._loop, daemon=True)
            t.start()
            self._threads.append(t)

    def join(self) -> None:
        self.stop.set()
        for t in self._threads:
            t.join(timeout=60)

    def _loop(self) -> None:
        with httpx.Client(base_url=self.url, headers=self.headers, timeout=45) as client:
            while not self.stop.is_set():
                try:
                    r = client.post(f"/v1/agents/{self.agent_id}/conversations", json={})
                    if r.status_code != 201:
                        raise RuntimeError(r.status_code)
                    conversation = r.json()["id"]
                    with self.lock:
                        self.conversations.append(conversation)
                    r = client.post(
                        f"/v1/conversations/{conversation}/say", json={"input": "What does the stub say?"}
                    )
                    if r.status_code != 200:
                        raise RuntimeError(r.status_code)
                    state = r.json()["conversationState"]
                    with self.lock:
                        self.states[state] = self.states.get(state, 0) + 1
                except Exception:  # noqa: BLE001 - counted: the web server may be down
                    with self.lock:
                        self.failed_requests += 1
                    time.sleep(0.5)


class SdkClients:
    """Threads using the Python SDK (timeout 2 s): decorate → report loops, counted per phase."""

    def __init__(self, url: str, key: str, threads: int, timeout: float = 2.0) -> None:
        from threadless import Threadless

        self.client = Threadless(api_key=key, base_url=url, timeout=timeout, on_error=self._on_error)
        self.threads, self.timeout = threads, timeout
        self.phase = "setup"
        self.lock = threading.Lock()
        self.counts: dict[str, dict] = {}
        self.stop = threading.Event()
        self.paused = threading.Event()  # set while the run counts (so the outbox can drain)
        self._threads: list[threading.Thread] = []
        self.memories = [
            self.client.create(metadata={"sdk": "reliability", "n": str(i)}).id for i in range(threads)
        ]

    def _bump(self, field: str, amount: float = 1) -> None:
        with self.lock:
            row = self.counts.setdefault(
                self.phase, {"turns": 0, "degraded": 0, "exceptions": 0, "report_errors": 0, "max_s": 0.0}
            )
            if field == "max_s":
                row["max_s"] = max(row["max_s"], amount)
            else:
                row[field] += amount

    def _on_error(self, error, context) -> None:
        if context.get("operation") == "report":
            self._bump("report_errors")

    def start(self) -> None:
        for memory_id in self.memories:
            t = threading.Thread(target=self._loop, args=(memory_id,), daemon=True)
            t.start()
            self._threads.append(t)

    def join(self) -> None:
        self.stop.set()
        for t in self._threads:
            t.join(timeout=30)
        self.client.close(timeout=5)

    def _loop(self, memory_id: str) -> None:
        n = 0
        while not self.stop.is_set():
            if self.paused.is_set():
                time.sleep(0.2)
                continue
            n += 1
            began = time.monotonic()
            try:
                request = self.client.decorate(
                    memory_id, [{"role": "user", "content": f"SDK turn {n}: hello"}]
                )
                if request.degraded:
                    self._bump("degraded")
                self.client.report(memory_id, [{"role": "assistant", "content": f"Reply {n}."}])
                self._bump("turns")
            except Exception:  # noqa: BLE001 - the thing being counted: must stay 0
                self._bump("exceptions")
            self._bump("max_s", time.monotonic() - began)
            time.sleep(0.5)
