"""OpenTelemetry for the web and worker processes (the `otel` extra: `pip install
'threadless-server[otel]'`), on when THREADLESS_TRACING is true.

The official instrumentations: ASGI (each request a server span at the ASGI entry, whichever way
it is served: the hot routes, the view threads, the async views and their streams), Django (a
span per request inside it), Celery (the publish and the task run, the trace context carried in
the message headers), httpx (outbound model and embedding calls) and the database driver
(psycopg on PostgreSQL, sqlite3 otherwise). Spans go over OTLP/HTTP to
OTEL_EXPORTER_OTLP_ENDPOINT (the exporter reads that and the other standard OTEL_* variables
itself); OTEL_SERVICE_NAME names the process (default threadless-web / threadless-worker). Off,
nothing here imports OpenTelemetry.

No query value leaves the process: every span passes `RedactingSpanProcessor` on its way to the
exporter, which replaces the query and fragment of every attribute that carries a URL with
[redacted] (publishable keys in `?key=`, external ids, metadata filters; the path is kept) and
redacts the URLs and secrets in exception messages. Server spans are named after the route
pattern, never the path.
"""

from __future__ import annotations

import os

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from common import tracing
from common.redaction import raw_error_text, url_without_query

_installed = False

# Span attributes that carry a URL, a request target or a query: OpenTelemetry's HTTP conventions,
# the old names and the stable ones.
URL_ATTRIBUTES = frozenset({"http.url", "http.target", "url.full", "url.original"})
QUERY_ATTRIBUTES = frozenset({"url.query", "url.fragment"})  # the part after `?` / `#` alone
# Exception events and an error status repeat what the exception said (httpx names the URL).
ERROR_TEXT_ATTRIBUTES = frozenset({"exception.message", "exception.stacktrace"})


def redacted_attributes(attributes) -> dict | None:
    """The attributes with every URL's query and fragment replaced by [redacted] (the path kept),
    and the URLs and secrets in an exception's text redacted (`raw_error_text`: cut to its head
    and tail); None when nothing changes."""
    changed = None
    for name, value in (attributes or {}).items():
        if not isinstance(value, str):
            continue
        if name in URL_ATTRIBUTES:
            clean = url_without_query(value)
        elif name in QUERY_ATTRIBUTES:
            clean = "[redacted]"
        elif name in ERROR_TEXT_ATTRIBUTES:
            clean = raw_error_text(value)
        else:
            continue
        if clean != value:
            changed = changed if changed is not None else dict(attributes)
            changed[name] = clean
    return changed


def redacting_processor(inner):
    """`inner` behind the redaction (a class built here: OpenTelemetry is imported only when on)."""
    from opentelemetry.sdk.trace import Event, ReadableSpan, SpanProcessor
    from opentelemetry.trace import Status

    class RedactingSpanProcessor(SpanProcessor):
        """Hands `inner` each ended span with its URL attributes redacted (a copy: an ended span
        is read-only), in its events and its status description too."""

        def on_start(self, span, parent_context=None):
            inner.on_start(span, parent_context=parent_context)

        def on_end(self, span):
            attributes = redacted_attributes(span.attributes)
            events = [(event, redacted_attributes(event.attributes)) for event in span.events]
            description = span.status.description
            clean = raw_error_text(description) if description else description
            if attributes is None and clean == description and all(c is None for _, c in events):
                inner.on_end(span)
                return
            inner.on_end(
                ReadableSpan(
                    name=span.name,
                    context=span.context,
                    parent=span.parent,
                    resource=span.resource,
                    attributes=span.attributes if attributes is None else attributes,
                    events=[e if c is None else Event(e.name, c, e.timestamp) for e, c in events],
                    links=span.links,
                    kind=span.kind,
                    status=span.status if clean == description else Status(span.status.status_code, clean),
                    start_time=span.start_time,
                    end_time=span.end_time,
                    instrumentation_scope=span.instrumentation_scope,
                )
            )

        def shutdown(self):
            inner.shutdown()

        def force_flush(self, timeout_millis: int = 30000):
            return inner.force_flush(timeout_millis)

    return RedactingSpanProcessor()


def setup(*, service: str, span_processor=None) -> bool:
    """Install the tracer provider and the instrumentations once per process; False when off.
    `span_processor` replaces the OTLP exporter (tests: an in-memory exporter)."""
    global _installed
    if not settings.THREADLESS_TRACING or _installed:
        return _installed
    try:
        from opentelemetry import trace
        from opentelemetry.instrumentation.celery import CeleryInstrumentor
        from opentelemetry.instrumentation.django import DjangoInstrumentor
        from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise ImproperlyConfigured(
            "THREADLESS_TRACING is on but OpenTelemetry is not installed: pip install "
            "'threadless-server[otel]'"
        ) from exc
    provider = TracerProvider(
        resource=Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME", service)})
    )
    if span_processor is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        span_processor = BatchSpanProcessor(OTLPSpanExporter())
    provider.add_span_processor(redacting_processor(span_processor))
    trace.set_tracer_provider(provider)
    DjangoInstrumentor().instrument()
    CeleryInstrumentor().instrument()
    HTTPXClientInstrumentor().instrument()
    if settings.IS_SQLITE:
        from opentelemetry.instrumentation.sqlite3 import SQLite3Instrumentor

        SQLite3Instrumentor().instrument()
    else:
        from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor

        PsycopgInstrumentor().instrument(enable_commenter=False)
    tracing.enable()
    _installed = True
    return True


def traced_asgi(app, *, route_of, tracer_provider=None):
    """`app` with a server span per HTTP request (the official ASGI middleware), named
    `METHOD <route pattern>` (`route_of(path)`: the URL pattern, or None for no route), never the
    path itself; the span lasts until the answer's last byte (an SSE stream's too). The per-message
    receive and send spans are left out: a stream would make one per event. `tracer_provider`
    replaces the global one (tests)."""
    from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware
    from opentelemetry.util.http import sanitize_method

    def span_details(scope) -> tuple[str, dict]:
        method = sanitize_method(scope.get("method", "").strip())
        method = "HTTP" if method == "_OTHER" else method
        route = route_of(scope.get("path", ""))
        return (f"{method} {route}", {"http.route": route}) if route else (method, {})

    return OpenTelemetryMiddleware(
        app,
        default_span_details=span_details,
        exclude_spans=["receive", "send"],
        tracer_provider=tracer_provider,
    )


def flush() -> None:
    """Export what is buffered (a worker process before it exits)."""
    if _installed:
        from opentelemetry import trace

        trace.get_tracer_provider().force_flush()
