"""Request ids on every response, and the one error shape for what DRF never sees under /v1.

Both middlewares work sync and async, so the SSE views stream under ASGI without adapters.
"""

from __future__ import annotations

import io
import logging
import secrets
import time

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings

from common import logs
from common.errors import error_response, exception_response
from common.redaction import echo

log = logging.getLogger("threadless.errors")


def _new_request_id() -> str:
    return "req_" + secrets.token_hex(12)


class SyncAndAsyncMiddleware:
    """A middleware that runs under WSGI and ASGI alike: subclasses give `before` (an early answer,
    or None) and `after`."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request):
        if self.is_async:
            return self.__acall__(request)
        before = self.before(request)
        if before is not None:
            return self.after(request, before)
        return self.after(request, self.get_response(request))

    async def __acall__(self, request):
        before = self.before(request)
        if before is not None:
            return self.after(request, before)
        return self.after(request, await self.get_response(request))

    def before(self, request):
        return None

    def after(self, request, response):
        return response


def route_of(request) -> str:
    """The matched URL pattern (`v1/memories/<str:memory_id>/facts`), never the path itself: a
    bounded label for metrics and logs."""
    match = getattr(request, "resolver_match", None)
    return match.route if match is not None and match.route else "unmatched"


class RequestIdMiddleware(SyncAndAsyncMiddleware):
    """The request id (X-Request-Id) and the request's log context; when the answer is ready,
    the request's count and latency (common.metrics) and its log line (common.logs)."""

    def before(self, request):
        incoming = request.headers.get("X-Request-Id", "")
        ok = 8 <= len(incoming) <= 64 and incoming.replace("_", "").replace("-", "").isalnum()
        request.request_id = incoming if ok else _new_request_id()
        request.started_at = time.perf_counter()
        request.log_context = logs.start(request.request_id, "")
        return None

    def process_view(self, request, view_func, view_args, view_kwargs):
        logs.bind(route=route_of(request))

    def after(self, request, response):
        logs.request_done(
            route=route_of(request),
            method=request.method,
            status=response.status_code,
            seconds=time.perf_counter() - request.started_at,
        )
        logs.end(request.log_context)
        response["X-Request-Id"] = request.request_id
        # Rate-limited routes carry their limit on every answer, not only on a 429.
        for name, value in (getattr(request, "ratelimit_headers", None) or {}).items():
            if name not in response:
                response[name] = value
        return response


def _is_api(request) -> bool:
    return request.path.startswith("/v1/") or request.path == "/v1"


class ApiErrorMiddleware(SyncAndAsyncMiddleware):
    """Under /v1: body too large (413), Django 404/405/500 and unhandled exceptions → error shape."""

    def before(self, request):
        if not _is_api(request):
            return None
        limit = settings.THREADLESS_MAX_BODY_BYTES
        length = request.META.get("CONTENT_LENGTH") or ""
        if not length and request.method in ("POST", "PUT", "PATCH", "DELETE"):
            # A chunked body has no Content-Length: Django and DRF would read it as empty and
            # the call would "succeed" on nothing. Read it here (up to the limit) instead.
            raw = request.read(limit + 1)
            request.META["CONTENT_LENGTH"] = str(len(raw))
            request._stream = io.BytesIO(raw)  # what HttpRequest.body does after reading
            request._read_started = False
            length = str(len(raw))
        try:
            too_large = int(length or "0") > limit
        except ValueError:
            too_large = False
        if too_large:
            return error_response(
                request,
                status=413,
                code="payload_too_large",
                message=f"The body is larger than the limit of {settings.THREADLESS_MAX_BODY_BYTES} bytes.",
                hint="Send a smaller body, or split the messages over several calls.",
            )
        return None

    def after(self, request, response):
        if not _is_api(request):
            return response
        content_type = response.get("Content-Type", "")
        if response.status_code >= 400 and not content_type.startswith(
            ("application/json", "text/event-stream")
        ):
            status = response.status_code
            code = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large"}.get(
                status, "internal" if status >= 500 else "invalid_request"
            )
            message = {
                404: "No such path or object.",
                405: f"Method {echo(request.method, 32)} is not allowed on this path.",
                413: "The body is too large.",
            }.get(
                status, "Something went wrong on our side." if status >= 500 else "The request was not valid."
            )
            hint = {404: "See /v1/docs for the API's paths."}.get(status, "See /v1/docs.")
            return error_response(request, status=status, code=code, message=message, hint=hint)
        return response

    def process_exception(self, request, exception):
        if not _is_api(request):
            return None
        return exception_response(request, exception)
