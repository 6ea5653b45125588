"""The proxy's model calls (Chat Completions, Responses, Messages) straight from the event loop,
without Django's request cycle.

Under Django's ASGI handler a proxied call cost the server more CPU than the proxy's own work:
the request cycle (twelve middlewares through asgiref's adapters, the request object, the
request signals) and, above all, a new thread per request (asgiref's ThreadSensitiveContext gives
each request an executor of its own), so a new database connection per call as well
(docs/tuning/proxy.md). Here the same view code (`proxy.views.proxy_call`) runs in the event
loop's task, its database work goes to the sync views' threads (serving.syncviews: persistent
connections, Django's request_started / request_finished around each hand-off, as the hot routes
do), and this module does for these routes what the request cycle did, with the same functions:

* the body limit: the body is read by `SyncViews.read_body` (413 as soon as it is passed);
* allowed hosts: the caller sends a request whose Host Django would refuse Django's way (the same
  400 and log line), as it does a chunked body, a query string or another method;
* the answer's headers: the security headers Django's middlewares add (serving.headers),
  `X-Request-Id`, the key's rate-limit headers, `Content-Length`;
* error shapes: Threadless's own errors in the provider's shape (`proxy.provider_errors`);
  an exception the view did not answer, in the same shape (`common.errors`);
* the request's log context, count, latency and log line (common.logs), and the `django.request`
  line Django writes for a 5xx;
* a client that goes away: the view's task is cancelled, as Django's handler does (a stream
  then stores the part received, cut off; proxy.views.relay).

threadless_site.asgi routes here under the same conditions as the hot routes
(THREADLESS_HOT_ROUTES; off while SSL redirect or HSTS are on). Nothing here decides
anything about the call itself: that stays in proxy.views.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import aclosing
from dataclasses import dataclass
from functools import lru_cache

from django.core import signals
from django.urls import Resolver404, resolve
from django.utils.datastructures import CaseInsensitiveMapping

from common import logs
from common.errors import exception_response
from proxy import views
from proxy.messages import MESSAGES
from proxy.protocols import OPENAI, Protocol
from proxy.provider_errors import in_provider_shape
from proxy.responses import RESPONSES
from serving.bodylimit import request_id_of
from serving.headers import security_headers
from serving.requestlog import log_error_answer

VIEWS = {
    views.openai_chat_completions: OPENAI,
    views.openai_responses: RESPONSES,
    views.anthropic_messages: MESSAGES,
}


@dataclass(frozen=True)
class Route:
    protocol: Protocol
    pattern: str  # the Django URL pattern: the route label of the metrics and the log context
    match: object  # Django's ResolverMatch of the path


@lru_cache(maxsize=64)
def route(path: str) -> Route | None:
    """The proxy route a path resolves to (the same URLs Django's way uses), else None."""
    try:
        match = resolve(path)
    except Resolver404:
        return None
    protocol = VIEWS.get(match.func)
    return Route(protocol, match.route, match) if protocol is not None else None


class ProxyRequest:
    """What proxy.views reads of a Django request: method, path, headers (case-insensitive, repeated
    headers joined with "," as Django's ASGIRequest does), body and the request id; the key, its
    rate-limit headers and the matched route are set on it as on a Django request."""

    __slots__ = (
        "method",
        "path",
        "headers",
        "body",
        "request_id",
        "resolver_match",
        "api_key",
        "key_unconfirmed",
        "ratelimit_headers",
    )

    def __init__(self, scope, body: bytes, match, request_id: str) -> None:
        seen: dict[str, str] = {}
        for name, value in scope["headers"]:
            key, text = name.decode("latin-1"), value.decode("latin-1")
            seen[key] = f"{seen[key]},{text}" if key in seen else text
        self.method = scope["method"]
        self.path = scope["path"]
        self.headers = CaseInsensitiveMapping(seen)
        self.body = body
        self.request_id = request_id
        self.resolver_match = match
        self.api_key = None
        self.key_unconfirmed = None
        self.ratelimit_headers = None


def _in_request_cycle(function, *args):
    """On a view thread: `function` inside Django's request signals (connection upkeep:
    close_old_connections before and after, as Django's handlers do)."""
    signals.request_started.send(sender=_in_request_cycle)
    try:
        return function(*args)
    finally:
        signals.request_finished.send(sender=_in_request_cycle)


class ProxyRoutes:
    """The ASGI app of the proxy's model calls; `threads` is the sync views' app (its body reader
    and its view threads)."""

    def __init__(self, threads) -> None:
        self.threads = threads
        self._static: dict[str, list[tuple[bytes, bytes]]] = {}

    def offload(self, function, *args) -> asyncio.Future:
        """`function(*args)` on a view thread: the future of its result."""
        return self.threads.executor.run(_in_request_cycle, function, *args)

    async def __call__(self, scope, receive, send, found: Route) -> None:
        body = await self.threads.read_body(scope, receive, send)
        if body is None:
            return
        request = ProxyRequest(scope, body, found.match, request_id_of(scope))
        token = logs.start(request.request_id, found.pattern)
        # As Django's handler: the answer in one task, a client disconnect cancels it.
        answering = asyncio.ensure_future(self._answer(scope, request, found, send))
        listening = asyncio.ensure_future(_disconnect(receive))
        try:
            await asyncio.wait((answering, listening), return_when=asyncio.FIRST_COMPLETED)
        finally:
            # The answer is sent, the client went away, or this request itself was cancelled (the
            # server stopping): either way nothing of it outlives this call.
            listening.cancel()
            if not answering.done():
                answering.cancel()
            try:
                await answering
            except asyncio.CancelledError:
                pass
            finally:
                logs.end(token)

    async def _answer(self, scope, request: ProxyRequest, found: Route, send) -> None:
        started = time.perf_counter()
        try:
            answer = await views.proxy_call(request, found.protocol, offload=self.offload)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - as ApiErrorMiddleware: the one error shape
            answer = exception_response(request, exc)
        try:
            answer = in_provider_shape(request, answer)
            status = answer.status_code
            logs.request_done(
                route=found.pattern, method="POST", status=status, seconds=time.perf_counter() - started
            )
            if status >= 500:
                log_error_answer(scope, request.body, status)
            await send(
                {"type": "http.response.start", "status": status, "headers": self._headers(request, answer)}
            )
            if not answer.streaming:
                await send({"type": "http.response.body", "body": answer.content, "more_body": False})
                return
            async with aclosing(aiter(answer)) as content:
                async for part in content:
                    await send({"type": "http.response.body", "body": part, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            if answer.streaming:
                answer.close()  # the relay's slot and upstream connection, however the stream ended

    def _headers(self, request: ProxyRequest, answer) -> list[tuple[bytes, bytes]]:
        """The answer's headers, then what Django's middlewares add when the answer has none of
        its own: X-Request-Id, the rate-limit headers, the security headers, Content-Length."""
        out = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in answer.items()]
        names = {name for name, _ in out}
        out.append((b"x-request-id", request.request_id.encode("latin-1")))
        for name, value in (request.ratelimit_headers or {}).items():
            if name.lower().encode("latin-1") not in names:
                out.append((name.lower().encode("latin-1"), value.encode("latin-1")))
        static = self._static.get(request.path)
        if static is None:
            static = self._static[request.path] = security_headers(request.path)
        out.extend(header for header in static if header[0] not in names)
        if not answer.streaming and b"content-length" not in names:
            out.append((b"content-length", str(len(answer.content)).encode()))
        return out


async def _disconnect(receive) -> None:
    """Returns when the client has gone away (the body was read before)."""
    while (await receive())["type"] != "http.disconnect":
        pass
