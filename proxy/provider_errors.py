"""Threadless's own errors under /v1/openai/ and /v1/anthropic/, in that provider's shape (SPEC 4.8).

The proxy's routes raise the same errors as every /v1 route (a bad key, a rate limit, an unknown
memory, a body too large, an unknown path), answered in the SPEC 4.1 shape by the one exception
handler and `ApiErrorMiddleware`. A provider's client does not read that shape, so this middleware,
placed outside `ApiErrorMiddleware`, rewrites those answers into OpenAI's `{"error": {"message",
"type", "param", "code"}}` or Anthropic's `{"type": "error", "error": {"type", "message"}}`, keeping
status and headers; what the message says to do (the hint) is appended to it. Upstream errors
already come in the provider's shape and pass untouched.
"""

from __future__ import annotations

import re

import orjson

from common.http.middleware import SyncAndAsyncMiddleware
from common.redaction import echo

PREFIXES = {"/v1/openai/": "openai", "/v1/anthropic/": "anthropic"}
# The field a Threadless message starts with ("input[0].content: …", "X-Threadless-Budget: …").
FIELD = re.compile(r"\A([A-Za-z_][\w.\-\[\]]{0,80}): ")
THREADLESS_KEYS = frozenset({"code", "message", "hint", "request_id", "retryable"})

OPENAI_TYPES = {
    401: "authentication_error",
    403: "permission_error",
    404: "invalid_request_error",
    409: "invalid_request_error",
    429: "rate_limit_error",
}
ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
# Codes Anthropic's clients act on, given as `error.details.error_code` (a thread they then replay).
ANTHROPIC_DETAILED = frozenset({"thread_not_found"})


def _provider(path: str) -> str | None:
    return next((name for prefix, name in PREFIXES.items() if path.startswith(prefix)), None)


def _threadless_error(answer) -> dict | None:
    if answer.status_code < 400 or getattr(answer, "streaming", False):
        return None
    if not answer.get("Content-Type", "").startswith("application/json"):
        return None
    try:
        data = orjson.loads(answer.content)
    except orjson.JSONDecodeError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    return error if isinstance(error, dict) and THREADLESS_KEYS <= error.keys() else None


def provider_error(provider: str, *, status: int, code: str, message: str) -> dict:
    if provider == "openai":
        match = FIELD.match(message)
        kind = OPENAI_TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
        if code == "quota_exceeded":
            kind = "insufficient_quota"
        return {
            "error": {"message": message, "type": kind, "param": match[1] if match else None, "code": code}
        }
    kind = ANTHROPIC_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    error = {"type": kind, "message": message}
    if code in ANTHROPIC_DETAILED:
        error["details"] = {"error_code": code}
    return {"type": "error", "error": error}


def _message(request, error: dict, status: int) -> str:
    if status == 404 and getattr(request, "resolver_match", None) is None:
        provider = "OpenAI" if request.path.startswith("/v1/openai/") else "Anthropic"
        served = (
            "/chat/completions, /responses and /conversations" if provider == "OpenAI" else "/v1/messages"
        )
        return (
            f"Threadless's {provider}-compatible proxy has no route {echo(request.method, 16)} "
            f"{echo(request.path, 200)}; it serves {served}."
        )
    message, hint = str(error.get("message") or ""), str(error.get("hint") or "")
    return f"{message} {hint}".strip() if hint and hint not in message else message


def in_provider_shape(request, answer):
    """`answer` with a Threadless error under a provider's prefix rewritten into that provider's
    shape (status and headers kept); any other answer as it is."""
    provider = _provider(request.path)
    error = _threadless_error(answer) if provider else None
    if error is None:
        return answer
    status = answer.status_code
    body = provider_error(
        provider,
        status=status,
        code=str(error.get("code") or ""),
        message=_message(request, error, status),
    )
    answer.content = orjson.dumps(body)
    answer["Content-Length"] = str(len(answer.content))
    return answer


class ProviderErrorMiddleware(SyncAndAsyncMiddleware):
    """`in_provider_shape` on Django's way (serving.proxyroutes calls it on its own)."""

    def after(self, request, answer):
        return in_provider_shape(request, answer)
