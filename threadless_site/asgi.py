"""ASGI entry point, for any ASGI server: `make serve` runs it under granian (see docs/deployment.md).

Sync views (the /v1 memory API, the console) run on a pool of THREADLESS_WEB_THREADS threads per
process through Django's WSGI handler (serving.syncviews: one hand-off to the thread and one back
per request), so one process has several requests in flight while they wait on the database; under
plain ASGI Django runs every sync view of a process on one thread. The hot routes (decorate,
report) go from the event loop straight to memories.api.hot on those threads, and the proxy's
model calls (serving.proxyroutes) run in the event loop without Django's request cycle, their
database work on those threads. Other async views (the conversation routes and their SSE streams)
stay on Django's ASGI handler. THREADLESS_WEB_THREADS=0 sends everything to the ASGI handler.

A request that gives its body's length both ways (Transfer-Encoding and Content-Length) is refused
400 before any of them (serving.framing).

Graceful shutdown: the ASGI lifespan shutdown tells running turns to stop at their next task
boundary (see common.shutdown), so they end EXECUTION_INTERRUPTED; under uvicorn the signal itself
raises that flag (common.sigterm). Request bodies pass the body limit first (serving.bodylimit,
also in syncviews): 413 as soon as the limit is passed. The server process tunes the cyclic GC at
startup (serving.gctune). With tracing on, every HTTP request gets its server span here
(threadless_site.tracing.traced_asgi).
"""

import os
import signal
import threading
import time
from functools import lru_cache

from django.conf import settings
from django.core.asgi import get_asgi_application

from common import logs
from common.shutdown import begin_shutdown, request_shutdown
from common.sigterm import install_if_uvicorn
from serving.bodylimit import BodyLimitMiddleware, request_id_of
from serving.framing import ambiguous_length, send_refusal
from serving.gctune import tune_gc
from serving.headers import security_headers

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
# Before the handlers load their middleware: the Django instrumentation adds its own (when on).
from threadless_site.tracing import setup as tracing_setup  # noqa: E402
from threadless_site.tracing import traced_asgi  # noqa: E402

TRACING = tracing_setup(service="threadless-web")
django_application = get_asgi_application()

from asgiref.sync import iscoroutinefunction  # noqa: E402 - after Django is set up
from django.core import signals  # noqa: E402
from django.urls import Resolver404, resolve  # noqa: E402

from memories.api import hot  # noqa: E402
from serving import proxyroutes  # noqa: E402
from serving.headers import host_allowed  # noqa: E402
from serving.requestlog import log_error_answer  # noqa: E402


def _body_limit() -> int:
    return settings.THREADLESS_MAX_BODY_BYTES


sync_application = None
if settings.THREADLESS_WEB_THREADS > 0:
    from django.core.wsgi import get_wsgi_application

    from serving.syncviews import SyncViews

    sync_application = SyncViews(get_wsgi_application(), settings.THREADLESS_WEB_THREADS, _body_limit)


@lru_cache(maxsize=4096)
def route_of(path: str) -> str | None:
    """The URL pattern `path` resolves to (`v1/memories/<str:memory_id>/report`), None for none:
    the name of its trace span."""
    found = hot.route(path)
    if found is not None:
        return found.pattern
    try:
        return resolve(path).route or None
    except Resolver404:
        return None


@lru_cache(maxsize=4096)
def is_async_route(path: str) -> bool:
    """Whether `path` resolves to an async view (those stay on the ASGI handler)."""
    try:
        match = resolve(path)
    except Resolver404:
        return False
    return iscoroutinefunction(match.func)


def _sized(scope) -> bool:
    """A body without Content-Length (chunked) stays on the ASGI handler: WSGI would read it as
    empty, and common.http.middleware reads it up to the body limit there (413 over the limit)."""
    if scope["method"] in ("GET", "HEAD", "OPTIONS"):
        return True
    return any(name == b"content-length" for name, _ in scope["headers"])


# Every HTTP request passes the body-limit guard before Django reads (and spools) its body.
guarded_application = BodyLimitMiddleware(django_application, _body_limit)

# The hot routes (decorate, report): a POST goes straight to memories.api.hot on a view thread,
# without Django's request cycle (the Django URLs of these paths run the same handler), once its
# Host header passes ALLOWED_HOSTS (serving.headers.host_allowed). Off when the security
# middleware answers differently per request (SSL redirect, HSTS): Django's way then; so does a
# request with a query string (DRF's `?format=` override, memories.api.hotroutes).
HOT_ROUTES = (
    settings.THREADLESS_HOT_ROUTES
    and sync_application is not None
    and not settings.SECURE_SSL_REDIRECT
    and not settings.SECURE_HSTS_SECONDS
)
# The proxy's model calls (serving.proxyroutes) take the same way, under the same conditions.
proxy_application = proxyroutes.ProxyRoutes(sync_application) if HOT_ROUTES else None
_HOT_HEADERS = {
    b"authorization": "authorization",
    b"content-type": "content-type",
    b"idempotency-key": "idempotency-key",
    b"accept": "accept",
}
_static_headers: list | None = None


def _hot_call(scope, found, headers: dict, body: bytes, request_id: str):
    """In a view thread: the hot handler inside Django's request signals (connection upkeep:
    close_old_connections before and after, as Django's handlers do), counted and logged as
    common.http.middleware does on Django's way, under the same route pattern."""
    started = time.perf_counter()
    route = found.pattern
    token = logs.start(request_id, route)
    signals.request_started.send(sender=_hot_call)
    status = 500
    try:
        answered = hot.answer(found, headers, body, request_id)
        status = answered[0]
        log_error_answer(scope, body, status)
        return answered
    finally:
        signals.request_finished.send(sender=_hot_call)
        logs.request_done(route=route, method="POST", status=status, seconds=time.perf_counter() - started)
        logs.end(token)


async def hot_application(scope, receive, send, found) -> None:
    global _static_headers
    body = await sync_application.read_body(scope, receive, send)
    if body is None:
        return
    headers = {}
    for name, value in scope["headers"]:
        wanted = _HOT_HEADERS.get(name)
        if wanted is not None:
            headers[wanted] = value.decode("latin-1")
    status, out, content = await sync_application.run(
        _hot_call, scope, found, headers, body, request_id_of(scope)
    )
    if _static_headers is None:
        _static_headers = security_headers("/v1/memories/x/decorate")
    raw = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in out]
    raw.extend(_static_headers)
    raw.append((b"content-length", str(len(content)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": content, "more_body": False})


_flag_chained = False


def raise_flag_on_signal() -> None:
    """Running turns notice SIGTERM / SIGINT at once, whatever the server. uvicorn: common.sigterm.
    Others (granian sends the lifespan shutdown only once open requests have ended): the shutdown
    flag is raised in front of the server's own handler, which still runs (an event loop's handler
    is woken through its wakeup fd, whichever Python handler is set). Main thread only, once."""
    global _flag_chained
    if _flag_chained or install_if_uvicorn() or threading.current_thread() is not threading.main_thread():
        return
    _flag_chained = True
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(sig)
        if not callable(previous):
            continue

        def handler(signum, frame, _previous=previous):
            request_shutdown()
            _previous(signum, frame)

        signal.signal(sig, handler)


async def application(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                # The server has set its signal handlers by now: chain the shutdown flag in front.
                raise_flag_on_signal()
                tune_gc()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await begin_shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return
    elif scope["type"] == "http" and ambiguous_length(scope):
        await send_refusal(send, scope)  # request smuggling's shape: refused before any view
    elif (
        HOT_ROUTES
        and scope["type"] == "http"
        and scope["method"] == "POST"
        and not scope.get("root_path")
        and not scope.get("query_string")
        and _sized(scope)
        and (found := hot.route(scope["path"]) or proxyroutes.route(scope["path"])) is not None
        and host_allowed(scope)  # a Host Django refuses gets Django's answer (400, one log line)
    ):
        if isinstance(found, proxyroutes.Route):
            await proxy_application(scope, receive, send, found)
        else:
            await hot_application(scope, receive, send, found)
    elif (
        scope["type"] == "http"
        and sync_application is not None
        and _sized(scope)
        and not is_async_route(scope["path"])
    ):
        await sync_application(scope, receive, send)
    else:
        await guarded_application(scope, receive, send)


if TRACING:  # a server span per request, at the entry, whichever way it is then served
    application = traced_asgi(application, route_of=route_of)
