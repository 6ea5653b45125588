"""What every provider shares: the error type, HTTP error reduction, the outbound pool and the\nbounded JSON
and SSE calls."""

from __future__ import annotations

import errno
import json
import threading
from collections.abc import Callable

import httpx

from common.redaction import provider_message, raw_error_text
from providers.bounded import ACCEPT_ENCODING, UpstreamUnreadable, iter_events, read_body, read_head
from providers.egress import EgressRefused, egress_allow, egress_client, url_check


class ProviderError(Exception):
    """A failed model call. `reason` is the most specific message (the provider's own message
    when its body has one); `error_type` one of timeout/transport/rate_limit/content_filter/
    provider/unknown; `raw` the fuller staff-only text (secrets are redacted when stored)."""

    def __init__(self, reason: str, *, error_type: str = "provider", raw: str = "", partial: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.error_type = error_type
        self.raw = raw or reason
        self.partial = partial


class Interrupted(Exception):
    """Graceful shutdown stopped a call mid-way."""

    def __init__(self, partial: str = ""):
        super().__init__("interrupted by shutdown")
        self.partial = partial


def body_message(body: str) -> str | None:
    """The provider's message: JSON error.message/message/error/detail, or a short plain line."""
    message = provider_message(body)
    if message is not None:
        return message.strip() or None
    text = (body or "").strip()
    if text and "<" not in text and "\n" not in text and len(text) <= 300:
        return text
    return None


def http_error(status: int, body: str, url: str) -> ProviderError:
    message = body_message(body)
    lowered = (body or "").lower()
    if status == 429:
        error_type = "rate_limit"
    elif status in (408, 504):
        error_type = "timeout"
    elif "content_filter" in lowered or "content_policy" in lowered:
        error_type = "content_filter"
    else:
        error_type = "provider"
    return ProviderError(
        message or f"HTTP {status}",
        error_type=error_type,
        raw=raw_error_text(f"HTTP {status} from {url}: {body[:8000]}"),
    )


def _refused(exc: BaseException) -> bool:
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ConnectionRefusedError) or getattr(exc, "errno", None) == errno.ECONNREFUSED:
            return True
        if "refused" in str(exc).lower():
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def transport_error(exc: Exception, *, timeout_ms: int, url: str) -> ProviderError:
    raw = raw_error_text(f"{exc.__class__.__module__}.{exc.__class__.__name__}: {exc} ({url})")
    if isinstance(exc, httpx.TimeoutException):
        return ProviderError(f"timed out after {timeout_ms} ms", error_type="timeout", raw=raw)
    if isinstance(exc, EgressRefused):  # the caller sees the generic text; the reason goes to raw
        raw = raw_error_text(f"{exc.__class__.__module__}.EgressRefused: {exc.detail} ({url})")
        return ProviderError(str(exc), error_type="transport", raw=raw)
    if _refused(exc):
        return ProviderError("connection refused", error_type="transport", raw=raw)
    if isinstance(exc, httpx.TransportError):
        return ProviderError(f"connection failed ({exc.__class__.__name__})", error_type="transport", raw=raw)
    return ProviderError(f"{exc.__class__.__name__}: {exc}", error_type="unknown", raw=raw)


_client: httpx.Client | None = None
_client_policy: tuple = ()
_client_lock = threading.Lock()


def http_client() -> httpx.Client:
    """This process's connection pool for outbound calls (thread-safe; timeouts are per request).

    Creating an httpx.Client loads the CA bundle (tens to hundreds of ms), far too slow per turn.
    Redirects are never followed: a redirect could lead past the egress policy. Connections are
    pinned to the addresses the egress policy checked (providers.egress); a changed allow list
    (environment or runtime) gets a fresh pool, so no connection opened under the old policy is reused.
    """
    global _client, _client_policy
    policy = egress_allow()
    if _client is None or _client_policy != policy:
        with _client_lock:
            if _client is None or _client_policy != policy:
                _client = egress_client()
                _client.headers["Accept-Encoding"] = ACCEPT_ENCODING  # what providers.bounded decodes
                _client_policy = policy
    return _client


def timeout_of(timeout_ms: int) -> httpx.Timeout:
    seconds = timeout_ms / 1000
    return httpx.Timeout(seconds, connect=min(seconds, 10.0))


def post_json(url: str, *, headers: dict, payload: dict, timeout_ms: int) -> dict:
    """A non-streaming JSON POST; any failure becomes a ProviderError. The answer is read within
    THREADLESS_UPSTREAM_MAX_BYTES decoded bytes (providers.bounded)."""
    try:
        url_check(url)
        with http_client().stream(
            "POST", url, headers=headers, json=payload, timeout=timeout_of(timeout_ms)
        ) as response:
            if response.status_code >= 400:
                raise http_error(response.status_code, read_head(response).decode("utf-8", "replace"), url)
            raw = read_body(response)
    except ProviderError:
        raise
    except UpstreamUnreadable as exc:
        raise ProviderError(str(exc), error_type="provider", raw=raw_error_text(f"{exc} ({url})")) from exc
    except Exception as exc:  # noqa: BLE001 - every transport failure is reported, never raised raw
        raise transport_error(exc, timeout_ms=timeout_ms, url=url) from exc
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise ProviderError(
            "the response was not JSON",
            error_type="provider",
            raw=raw_error_text(raw[:4000].decode("utf-8", "replace")),
        ) from None


def post_sse(
    url: str,
    *,
    headers: dict,
    payload: dict,
    timeout_ms: int,
    handle: Callable[[str, str], str | None],
    on_token: Callable[[str], None],
    should_stop: Callable[[], bool],
) -> str:
    """A streaming POST: `handle(event, data)` returns the text delta of one SSE event (or None).
    The stream is read within the stream and frame caps (providers.bounded)."""
    text: list[str] = []
    try:
        url_check(url)
        with http_client().stream(
            "POST", url, headers=headers, json=payload, timeout=timeout_of(timeout_ms)
        ) as response:
            if response.status_code >= 400:
                raise http_error(response.status_code, read_head(response).decode("utf-8", "replace"), url)
            for event, data in iter_events(response):
                if should_stop():
                    raise Interrupted("".join(text))
                delta = handle(event, data)
                if delta:
                    text.append(delta)
                    on_token(delta)
    except (ProviderError, Interrupted) as exc:
        exc.partial = "".join(text)
        raise
    except UpstreamUnreadable as exc:
        raise ProviderError(
            str(exc), error_type="provider", raw=raw_error_text(f"{exc} ({url})"), partial="".join(text)
        ) from exc
    except Exception as exc:  # noqa: BLE001
        error = transport_error(exc, timeout_ms=timeout_ms, url=url)
        error.partial = "".join(text)
        raise error from exc
    return "".join(text)


def loads(data: str) -> dict:
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        raise ProviderError(
            "the stream sent data that is not JSON", error_type="provider", raw=raw_error_text(data[:4000])
        ) from None
    return value if isinstance(value, dict) else {}
