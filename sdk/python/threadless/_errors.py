"""ThreadlessError: what the SDK raises, and what it hands to ``on_error`` on a fallback."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["ThreadlessConnectionError", "ThreadlessError", "ThreadlessTimeoutError", "is_fallback_status"]

# Status codes after which decorate falls back to the local tail (every other 4xx raises).
_FALLBACK_STATUSES = frozenset({408, 429})

_CODES_BY_STATUS = {
    400: "invalid_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    409: "conflict",
    413: "payload_too_large",
    429: "rate_limited",
    500: "internal",
    502: "bad_gateway",
    503: "unavailable",
    504: "gateway_timeout",
}


def is_fallback_status(status: int) -> bool:
    """True for the answers decorate treats as "the service could not answer": 408, 429, 5xx."""
    return status >= 500 or status in _FALLBACK_STATUSES


class ThreadlessError(Exception):
    """An error from the Threadless API, or from reaching it.

    ``status`` is the HTTP status (None when no answer arrived), ``code`` the error code of the
    API's error shape (``not_found``, ``rate_limited``, …; ``timeout``, ``connection_error`` or
    ``invalid_response`` when the SDK made it up), ``message`` and ``hint`` say what happened and
    what to do, ``request_id`` is the server's ``X-Request-Id`` (quote it when asking for help).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str = "error",
        hint: str | None = None,
        request_id: str | None = None,
        retryable: bool | None = None,
        retry_after: float | None = None,
        body: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.hint = hint
        self.request_id = request_id
        self.retryable = (
            retryable if retryable is not None else (status is None or is_fallback_status(status))
        )
        self.retry_after = retry_after
        self.body = body

    def __str__(self) -> str:
        head = f"{self.status} {self.code}" if self.status is not None else self.code
        text = f"{head}: {self.message}"
        if self.hint:
            text += f" (hint: {self.hint})"
        if self.request_id:
            text += f" [request {self.request_id}]"
        return text

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, message={self.message!r}, "
            f"request_id={self.request_id!r})"
        )

    @classmethod
    def from_response(cls, status: int, content: bytes, headers: Any, url: str = "") -> ThreadlessError:
        """Parse the API's error shape; anything else still becomes a clear error."""
        request_id = headers.get("x-request-id") if headers is not None else None
        retry_after = _retry_after(headers.get("retry-after") if headers is not None else None)
        try:
            body = json.loads(content) if content else None
        except ValueError:
            body = None
        error = body.get("error") if isinstance(body, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return cls(
                error["message"],
                status=status,
                code=str(error.get("code") or _CODES_BY_STATUS.get(status, "error")),
                hint=error.get("hint") if isinstance(error.get("hint"), str) else None,
                request_id=error.get("request_id") or request_id,
                retryable=error["retryable"] if isinstance(error.get("retryable"), bool) else None,
                retry_after=retry_after,
                body=body,
            )
        snippet = content[:200].decode("utf-8", "replace").strip() if content else ""
        where = f" from {url}" if url else ""
        message = f"HTTP {status}{where} without Threadless's error shape" + (
            f": {snippet}" if snippet else "."
        )
        return cls(
            message,
            status=status,
            code=_CODES_BY_STATUS.get(status, f"http_{status}"),
            hint="Check that base_url is the Threadless server's origin (the SDK adds /v1) and that no proxy "
            "in between answers for it.",
            request_id=request_id,
            retry_after=retry_after,
            body=body if body is not None else snippet,
        )


class ThreadlessConnectionError(ThreadlessError):
    """No answer from the server: refused, reset, DNS, TLS, or the connection dropped mid-answer."""

    def __init__(self, message: str, **kwargs: Any) -> None:
        kwargs.setdefault("code", "connection_error")
        kwargs.setdefault("hint", "Check base_url and that the Threadless server is running and reachable.")
        super().__init__(message, **kwargs)


class ThreadlessTimeoutError(ThreadlessConnectionError):
    """The call did not finish within the client's ``timeout`` (a total deadline)."""

    def __init__(self, message: str, **kwargs: Any) -> None:
        kwargs.setdefault("code", "timeout")
        kwargs.setdefault(
            "hint", "The server did not answer in time; raise timeout= if your network is slow."
        )
        super().__init__(message, **kwargs)


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        import time
        from email.utils import parsedate_to_datetime

        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError):
            return None
