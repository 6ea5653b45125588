"""OpenTelemetry spans of our own, and a trace's context carried across a thread hand-off.

Off (the default) every function here is a no-op and nothing of OpenTelemetry is imported; the
`otel` extra and THREADLESS_TRACING turn it on (threadless_site.tracing installs the SDK and the
official instrumentations, then calls `enable()`). The instrumentations cover the web request
(Django), the broker hand-off (Celery), outbound calls (httpx) and the database driver; the spans
here name the steps between them (the outbox row's processing, fact extraction), and
`capture`/`attached` carry a request's context to the outbox publisher's thread, so one trace
follows a report from the web request into the worker.
"""

from __future__ import annotations

from contextlib import contextmanager

ON = False
_context = None
_tracer = None


def enable() -> None:
    global ON, _context, _tracer
    from opentelemetry import context, trace

    _context = context
    _tracer = trace.get_tracer("threadless")
    ON = True


def capture():
    """The current trace context (to hand to another thread), or None when tracing is off."""
    return _context.get_current() if ON else None


@contextmanager
def attached(captured):
    """Run the block in a context `capture()` returned (nothing to do when it is None)."""
    if not ON or captured is None:
        yield
        return
    token = _context.attach(captured)
    try:
        yield
    finally:
        _context.detach(token)


@contextmanager
def span(name: str, **attributes):
    """A span around the block (attributes: bounded values, never user text)."""
    if not ON:
        yield
        return
    with _tracer.start_as_current_span(name, attributes=attributes):
        yield
