"""OpenTelemetry (the `otel` extra): one trace follows a report from the web request through the
outbox into the worker's fact extraction. A real server (granian, two worker processes) and a real
Celery worker (a prefork pool of two) export over OTLP/HTTP to a local receiver (a real socket),
which decodes what they sent."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

trace_service = pytest.importorskip(
    "opentelemetry.proto.collector.trace.v1.trace_service_pb2", reason="the otel extra is not installed"
)

from harness.servers import ThreadlessServer  # noqa: E402

pytestmark = pytest.mark.services


class Receiver(ThreadingHTTPServer):
    """An OTLP/HTTP trace receiver: keeps (service, span) for every span posted to /v1/traces."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.spans: list[dict] = []
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - the stdlib's name
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        request = trace_service.ExportTraceServiceRequest()
        request.ParseFromString(body)
        found = []
        for resource in request.resource_spans:
            service = next(
                (a.value.string_value for a in resource.resource.attributes if a.key == "service.name"), ""
            )
            for scope in resource.scope_spans:
                for span in scope.spans:
                    found.append(
                        {
                            "service": service,
                            "name": span.name,
                            "trace": span.trace_id.hex(),
                            "id": span.span_id.hex(),
                            "parent": span.parent_span_id.hex(),
                            "scope": scope.scope.name,
                        }
                    )
        with self.server.lock:
            self.server.spans.extend(found)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def traced():
    receiver = Receiver()
    server = ThreadlessServer(
        worker=True,
        env={
            "THREADLESS_TRACING": "true",
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url,
            "OTEL_BSP_SCHEDULE_DELAY": "100",
        },
        web_workers=2,  # as `make serve` runs: granian's worker processes and a prefork pool
        pool_processes=2,
    ).start()
    yield server, receiver
    server.stop()
    receiver.shutdown()


def test_one_trace_follows_a_report_from_the_request_into_the_worker_fact_extraction(traced):
    server, receiver = traced
    with server.client() as client:
        memory = client.post("/memories", json={}).json()["id"]
        assert (
            client.post(
                f"/memories/{memory}/decorate",
                json={
                    "messages": [{"role": "user", "content": "I live in Lisbon and I'm allergic to peanuts."}]
                },
            ).status_code
            == 200
        )
        assert (
            client.post(
                f"/memories/{memory}/report", json={"messages": [{"role": "assistant", "content": "Noted."}]}
            ).status_code
            == 202
        )
    deadline = time.time() + 60
    extraction = None
    while time.time() < deadline and extraction is None:
        with receiver.lock:
            extraction = next((s for s in receiver.spans if s["name"] == "threadless.facts.extract"), None)
        time.sleep(0.2)
    assert extraction is not None, "no fact extraction span arrived"
    time.sleep(0.5)  # the rest of the batch
    with receiver.lock:
        trace = [s for s in receiver.spans if s["trace"] == extraction["trace"]]
    by_id = {s["id"]: s for s in trace}
    names = {(s["service"], s["name"]) for s in trace}
    roots = [s for s in trace if s["parent"] not in by_id]
    assert [(s["service"], s["name"]) for s in roots] == [
        ("threadless-web", "POST v1/memories/<str:memory_id>/report")
    ]
    assert ("threadless-web", "apply_async/memories.tasks.process_outbox") in names
    assert ("threadless-worker", "run/memories.tasks.process_outbox") in names
    assert ("threadless-worker", "threadless.outbox.process") in names
    assert any(
        s["service"] == "threadless-worker" and ("sqlite3" in s["scope"] or "psycopg" in s["scope"])
        for s in trace
    )  # the worker's database calls are in it too
    # extraction ← outbox processing ← the task run ← the publish ← … ← the request
    chain, span = [], extraction
    while span is not None:
        chain.append(span["name"])
        span = by_id.get(span["parent"])
    assert chain[:3] == [
        "threadless.facts.extract",
        "threadless.outbox.process",
        "run/memories.tasks.process_outbox",
    ]
    assert chain[-1].endswith("/report")
    counted = defaultdict(int)
    for s in trace:
        counted[(s["service"], s["name"], s["scope"])] += 1
    print(
        "\n".join(
            f"{n:3} x {service:18} {name}  [{scope}]" for (service, name, scope), n in sorted(counted.items())
        )
    )
