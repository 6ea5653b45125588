"""OpenTelemetry for the web and worker processes (the `otel` extra: `pip install
'threadless-server[otel]'`), on when THREADLESS_TRACING is true.

The official instrumentations: Django (each request a server span), Celery (the publish and the
task run, the trace context carried in the message headers), httpx (outbound model and
embedding calls) and the database driver (psycopg on PostgreSQL, sqlite3 otherwise). Spans go
over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT (the exporter reads that and the other standard
OTEL_* variables itself); OTEL_SERVICE_NAME names the process (default threadless-web /
threadless-worker). Off, nothing here imports OpenTelemetry.
"""

from __future__ import annotations

import os

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from common import tracing

_installed = False


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
    provider.add_span_processor(span_processor)
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


def flush() -> None:
    """Export what is buffered (a worker process before it exits)."""
    if _installed:
        from opentelemetry import trace

        trace.get_tracer_provider().force_flush()
