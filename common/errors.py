"""One error shape for everything under /v1 (SPEC 4.1).

Domain errors are exception classes with a code, a status and a default hint. The DRF exception
handler and the middleware both render through `error_response`, so no path can answer in
another shape, and none ever includes a traceback, SQL or a secret.
"""

from __future__ import annotations

import json
import logging

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404, HttpResponse
from rest_framework import exceptions as drf

from common import metrics
from common.redaction import cut, echo, redact_secrets

log = logging.getLogger("threadless.errors")

RETRYABLE_STATUSES = {408, 429}
MESSAGE_LIMIT = 300  # no error message is longer: request input it repeats is cut at the source too


class ApiError(Exception):
    status = 400
    code = "invalid_request"
    hint = "Check the request against the API reference at /v1/docs."

    def __init__(self, message: str, *, hint: str | None = None, headers: dict | None = None):
        super().__init__(message)
        self.message = message
        if hint is not None:
            self.hint = hint
        self.headers = headers or {}


class InvalidRequest(ApiError):
    pass


class Unauthorized(ApiError):
    status = 401
    code = "unauthorized"
    hint = "Send 'Authorization: Bearer <key>' with an active project key."


class NotFound(ApiError):
    status = 404
    code = "not_found"
    hint = "Use an id that this project's API returned."


class Conflict(ApiError):
    status = 409
    code = "conflict"
    hint = "Read the object's current state and try again."


class PayloadTooLarge(ApiError):
    status = 413
    code = "payload_too_large"
    hint = "Send a smaller body, or split the messages over several calls."


class RateLimited(ApiError):
    status = 429
    code = "rate_limited"
    hint = "Wait for the number of seconds in Retry-After, then try again."


class QuotaExceeded(ApiError):
    status = 429
    code = "quota_exceeded"
    hint = "Raise the project's plan allowance in the console, or wait for the next period."


class Unavailable(ApiError):
    status = 503
    code = "unavailable"
    hint = "A dependency is down. Retry after the number of seconds in Retry-After."


def error_body(*, code: str, message: str, hint: str, status: int, request_id: str) -> dict:
    return {
        "error": {
            "code": code,
            "message": redact_secrets(cut(message, MESSAGE_LIMIT), None),
            "hint": hint,
            "request_id": request_id,
            "retryable": status in RETRYABLE_STATUSES or status >= 500,
        }
    }


def error_content(*, code: str, message: str, hint: str, status: int, request_id: str) -> bytes:
    """The error body's bytes, as JsonResponse writes them (the hot routes send these without a
    Django response: memories.api.hot)."""
    return json.dumps(
        error_body(code=code, message=message, hint=hint, status=status, request_id=request_id),
        cls=DjangoJSONEncoder,
    ).encode()


def error_response(
    request, *, status: int, code: str, message: str, hint: str, headers: dict | None = None
) -> HttpResponse:
    request_id = getattr(request, "request_id", "") or ""
    response = HttpResponse(
        error_content(code=code, message=message, hint=hint, status=status, request_id=request_id),
        status=status,
        content_type="application/json",
    )
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def _field_message(detail, path: str = "") -> str:
    """The first validation message, prefixed with the field path it is about."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            sub = echo(key) if key != "non_field_errors" else ""
            return _field_message(value, f"{path}.{sub}" if path and sub else (sub or path))
    if isinstance(detail, list) and detail:
        first = detail[0]
        if isinstance(first, (dict, list)):
            index = next((i for i, d in enumerate(detail) if d), 0)
            return _field_message(detail[index], f"{path}[{index}]")
        return f"{path}: {first}" if path else str(first)
    return f"{path}: {detail}" if path else str(detail)


def _method_message(detail: str) -> str:
    """DRF's 'Method "<method>" not allowed.' with the method (request input) cut short."""
    head, tail = 'Method "', '" not allowed.'
    if detail.startswith(head) and detail.endswith(tail):
        return head + echo(detail[len(head) : -len(tail)], 32) + tail
    return detail


def _is_redis_outage(exc: Exception) -> bool:
    """Redis (cache, rate limits) unreachable: a dependency down, so 503 like the database."""
    try:
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.exceptions import TimeoutError as RedisTimeoutError
    except ImportError:  # pragma: no cover - redis is a dependency
        return False
    return isinstance(exc, (RedisConnectionError, RedisTimeoutError))


def exception_to_error(exc: Exception) -> tuple[int, str, str, str, dict]:
    """Map any exception to (status, code, message, hint, headers)."""
    if isinstance(exc, ApiError):
        return exc.status, exc.code, exc.message, exc.hint, exc.headers
    if isinstance(exc, drf.ValidationError):
        return 400, "invalid_request", _field_message(exc.detail), InvalidRequest.hint, {}
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        return 400, "invalid_request", _field_message(detail), InvalidRequest.hint, {}
    if isinstance(exc, drf.ParseError):
        return (
            400,
            "invalid_request",
            "The body is not valid JSON.",
            "Send a JSON object with Content-Type: application/json.",
            {},
        )
    if isinstance(exc, drf.UnsupportedMediaType):
        return 400, "invalid_request", str(exc.detail), "Send Content-Type: application/json.", {}
    if isinstance(exc, (drf.NotAuthenticated, drf.AuthenticationFailed)):
        return 401, "unauthorized", str(exc.detail), Unauthorized.hint, {}
    if isinstance(exc, drf.PermissionDenied):
        return 401, "unauthorized", str(exc.detail), Unauthorized.hint, {}
    if isinstance(exc, (drf.NotFound, Http404)):
        return 404, "not_found", "No such object in this project.", NotFound.hint, {}
    if isinstance(exc, drf.MethodNotAllowed):
        return (
            405,
            "method_not_allowed",
            _method_message(str(exc.detail)),
            "See /v1/docs for the methods this path takes.",
            {},
        )
    if isinstance(exc, drf.NotAcceptable):
        return 406, "invalid_request", str(exc.detail), "Accept application/json.", {}
    if isinstance(exc, drf.Throttled):
        wait = int(exc.wait or 1)
        return (
            429,
            "rate_limited",
            "Too many requests for this key.",
            RateLimited.hint,
            {"Retry-After": str(wait)},
        )
    if _is_redis_outage(exc):
        return 503, "unavailable", "A dependency is unavailable.", Unavailable.hint, {"Retry-After": "5"}
    if isinstance(exc, (OperationalError, InterfaceError)):
        return 503, "unavailable", "The database is unavailable.", Unavailable.hint, {"Retry-After": "5"}
    if isinstance(exc, DatabaseError):
        return (
            500,
            "internal",
            "Something went wrong on our side.",
            "Retry later; quote the request_id if it persists.",
            {},
        )
    return (
        500,
        "internal",
        "Something went wrong on our side.",
        "Retry later; quote the request_id if it persists.",
        {},
    )


def exception_answer(
    exc: Exception, *, request_id: str, limits: dict | None = None
) -> tuple[int, dict, bytes]:
    """The one error answer for an exception under /v1: (status, headers, body) in the SPEC 4.1
    shape, a 5xx logged with its traceback (never sent), a 429 with the limit headers `limits`."""
    status, code, message, hint, headers = exception_to_error(exc)
    metrics.refusal(code)
    if status >= 500:
        log.error("request %s failed: %s", request_id or "-", exc.__class__.__name__, exc_info=exc)
    if isinstance(exc, (drf.Throttled, RateLimited, QuotaExceeded)):
        headers = {**(limits or {}), **headers}
    return (
        status,
        headers,
        error_content(code=code, message=message, hint=hint, status=status, request_id=request_id),
    )


def exception_response(request, exc: Exception) -> HttpResponse:
    """`exception_answer` as a Django response (DRF views, plain views, the middleware)."""
    status, headers, body = exception_answer(
        exc,
        request_id=getattr(request, "request_id", "") or "",
        limits=getattr(request, "ratelimit_headers", None) if request else None,
    )
    response = HttpResponse(body, status=status, content_type="application/json")
    for name, value in headers.items():
        response[name] = value
    return response


def api_exception_handler(exc, context):
    """DRF's EXCEPTION_HANDLER."""
    return exception_response(context.get("request"), exc)
