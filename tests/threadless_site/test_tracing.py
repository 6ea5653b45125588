"""OpenTelemetry (the `otel` extra): one trace follows a report from the web request through the
outbox into the worker's fact extraction; every request has a server span, whichever way it is
served; no span keeps a query value. A real server (granian, two worker processes) and a real
Celery worker (a prefork pool of two) export over OTLP/HTTP to a local receiver (a real socket),
which decodes what they sent; the ASGI entry and the redaction are also driven in-process."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

trace_service = pytest.importorskip(
    "opentelemetry.proto.collector.trace.v1.trace_service_pb2", reason="the otel extra is not installed"
)

from opentelemetry.proto.trace.v1 import trace_pb2  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402
from opentelemetry.trace import SpanKind  # noqa: E402

from harness.servers import ThreadlessServer  # noqa: E402
from threadless_site import asgi  # noqa: E402
from threadless_site.tracing import redacting_processor, traced_asgi  # noqa: E402

SECRETS = ("tl_pub_query0secret", "user-in-the-query", "team-in-the-query", "code-in-the-fragment")


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


def _value(any_value) -> str:
    """An OTLP attribute value as text (a string as itself)."""
    kind = any_value.WhichOneof("value")
    return str(getattr(any_value, kind)) if kind else ""


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
                            "kind": span.kind,
                            "attributes": {a.key: _value(a.value) for a in span.attributes},
                            "events": [str(e.attributes) for e in span.events],
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


@pytest.mark.services
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


def _spans(receiver, wanted: set[str], timeout: float = 30) -> list[dict]:
    """The web's spans once one of each `wanted` name has arrived."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with receiver.lock:
            spans = [s for s in receiver.spans if s["service"] == "threadless-web"]
        if wanted <= {s["name"] for s in spans}:
            return spans
        time.sleep(0.2)
    raise AssertionError(f"no span for {wanted - {s['name'] for s in spans}}")


@pytest.mark.services
def test_every_route_has_a_server_span_and_no_span_keeps_a_query_value(traced):
    server, receiver = traced
    query = {"key": SECRETS[0], "external_id": SECRETS[1], "metadata.team": SECRETS[2]}
    with server.client() as client:
        assert client.get("/memories", params=query).status_code == 200  # a view thread's route
        memory = client.post("/memories", json={}).json()["id"]
        hot = client.post(
            f"/memories/{memory}/decorate", json={"messages": [{"role": "user", "content": "Hi."}]}
        )
        assert hot.status_code == 200  # the hot route: no query string, served without Django
    # An async route (the SSE stream a browser opens with its publishable key in the query) and
    # the proxy's (async, no upstream set up: its error answer is enough).
    httpx.get(f"{server.url}/v1/conversations/cv_none/turns/1/events", params=query, timeout=30)
    httpx.post(f"{server.url}/v1/openai/chat/completions", params=query, json={}, timeout=30)
    spans = _spans(
        receiver,
        {
            "GET v1/memories",
            "POST v1/memories/<str:memory_id>/decorate",
            "GET v1/conversations/<str:conversation_id>/turns/<int:number>/events",
            "POST v1/openai/chat/completions",
        },
    )
    servers = {s["name"] for s in spans if s["kind"] == trace_pb2.Span.SPAN_KIND_SERVER}
    assert "GET v1/conversations/<str:conversation_id>/turns/<int:number>/events" in servers
    assert "POST v1/memories/<str:memory_id>/decorate" in servers
    urls = [s["attributes"].get("http.url", "") for s in spans if s["name"] == "GET v1/memories"]
    assert urls and all(url.endswith("/v1/memories?[redacted]") for url in urls), urls
    for span in spans:
        text = repr(span["attributes"]) + repr(span["events"])
        assert not any(secret in text for secret in SECRETS), (span["name"], text)
    print("\n".join(sorted({f"{s['name']}: {s['attributes'].get('http.url')}" for s in spans})))


# --- in-process: the ASGI entry's spans and the redaction ----------------------------------------


@pytest.fixture
def exported():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(redacting_processor(SimpleSpanProcessor(exporter)))
    yield provider, exporter
    provider.shutdown()


@pytest.mark.django_db(transaction=True)  # the async route reads on its own thread
async def test_the_asgi_entry_gives_every_route_a_server_span_named_after_its_pattern(exported):
    provider, exporter = exported
    app = traced_asgi(asgi.application, route_of=asgi.route_of, tracer_provider=provider)
    # `%26` decoded into `&` would make the rest of a value look like a parameter name of its own.
    query = {"key": SECRETS[0], "external_id": f"x&{SECRETS[1]}"}
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as client:
        await client.get("/v1/conversations/cv_none/turns/1/events", params=query)
        await client.post("/v1/memories/mem_x/decorate", json={"messages": []})
        await client.post("/v1/memories/external/user-in-the-path/report", json={"messages": []})
        await client.get("/no/such/page", params=query)
    spans = exporter.get_finished_spans()
    assert [(s.name, s.kind) for s in spans] == [
        ("GET v1/conversations/<str:conversation_id>/turns/<int:number>/events", SpanKind.SERVER),
        ("POST v1/memories/<str:memory_id>/decorate", SpanKind.SERVER),
        ("POST v1/memories/external/<path:external_id>/report", SpanKind.SERVER),
        ("GET", SpanKind.SERVER),  # no route: the method alone, never the path
    ]
    assert [s.attributes["http.status_code"] for s in spans] == [401, 401, 401, 404]
    assert spans[0].attributes["http.url"] == (
        "http://127.0.0.1/v1/conversations/cv_none/turns/1/events?[redacted]"
    )
    for span in spans:
        assert not any(secret in repr(dict(span.attributes)) for secret in SECRETS), span.name


def test_every_attribute_that_carries_a_url_keeps_no_query_value(exported):
    provider, exporter = exported
    tracer = provider.get_tracer("test")
    url = f"https://provider.example/v1/x?key={SECRETS[0]}&external_id={SECRETS[1]}#code={SECRETS[3]}"
    with tracer.start_as_current_span(
        "GET",
        attributes={
            "http.url": url,
            "url.full": url,
            "http.target": f"/v1/x?metadata.team={SECRETS[2]}",
            "url.query": f"key={SECRETS[0]}&metadata.team={SECRETS[2]}",
            "url.fragment": f"code={SECRETS[3]}",
            "url.path": "/v1/x",
            "http.method": "GET",
        },
    ) as span:
        try:
            raise httpx.HTTPError(f"Client error '401 Unauthorized' for url '{url}'")
        except httpx.HTTPError as error:
            span.record_exception(error)
            span.set_status(error)
    (done,) = exporter.get_finished_spans()
    assert (
        done.attributes["http.url"]
        == done.attributes["url.full"]
        == "https://provider.example/v1/x?[redacted]"
    )
    assert done.attributes["http.target"] == "/v1/x?[redacted]"
    assert done.attributes["url.query"] == done.attributes["url.fragment"] == "[redacted]"
    assert done.attributes["url.path"] == "/v1/x" and done.attributes["http.method"] == "GET"
    text = repr(dict(done.attributes)) + repr([dict(e.attributes) for e in done.events])
    text += done.status.description or ""
    assert "provider.example/v1/x" in text and not any(secret in text for secret in SECRETS)
