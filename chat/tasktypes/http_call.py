"""`http_call`: a templated HTTP request whose JSON response is stored as a `data` entry.

Failure reasons (SPEC 6.3): `API call to <host[:port]> failed: HTTP <status>[: <message>]`,
`… failed: timed out after <n> ms`, `… failed: connection refused`, `… failed: the upstream answer is
larger than 1 MiB` (the answer is read within THREADLESS_UPSTREAM_MAX_BYTES decoded bytes and, since
it is stored, THREADLESS_MAX_BODY_BYTES).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from chat.tasktypes.base import TaskContext, TaskFailure, TaskResult, specific_reason
from chat.templating import render, render_json
from common.http.body import MAX_JSON_DEPTH, json_depth
from common.messages import stored_reply_limit
from common.redaction import raw_error_text, redact_value
from common.tokens import text_tokens
from memories.policy import plain_task_id
from providers.base import body_message, http_client, timeout_of, transport_error
from providers.bounded import UpstreamUnreadable, answer_cap, read_body, read_head
from providers.egress import EgressRefused, host_port, url_check


def _render_body(body: Any, scope: dict) -> Any:
    """A string body is a JSON text template (values JSON-escaped); an object or list body has its
    string values templated as plain text and is JSON-encoded as a whole when sent."""
    if isinstance(body, str):
        return render_json(body, scope)
    return _render_values(body, scope)


def _render_values(body: Any, scope: dict) -> Any:
    if isinstance(body, str):
        return render(body, scope)
    if isinstance(body, dict):
        return {k: _render_values(v, scope) for k, v in body.items()}
    if isinstance(body, list):
        return [_render_values(v, scope) for v in body]
    return body


def _parse(text: str) -> Any:
    """The body as JSON, or (not JSON, or nested deeper than anything should walk) its text."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text[:20_000]
    return value if json_depth(value) <= MAX_JSON_DEPTH else text[:20_000]


def run(ctx: TaskContext, task: dict) -> TaskResult:
    request = task["request"]
    scope = {"input": ctx.input, "data": ctx.data()}
    url = render(request["url"], scope, escape=lambda v: quote(v, safe=""))
    method = request.get("method", "GET").upper()
    # A templated header value never carries a line break (no header injection from the input).
    headers = {k: " ".join(render(v, scope).splitlines()) for k, v in (request.get("headers") or {}).items()}
    timeout_ms = int(request.get("timeoutMs", 5000))
    host = host_port(url)
    operation = f"API call to {host} failed"
    kwargs: dict[str, Any] = {"headers": headers}
    if "body" in request and method not in ("GET", "HEAD"):
        body = _render_body(request["body"], scope)
        if isinstance(body, str):
            kwargs["content"] = body.encode()
            if not any(k.lower() == "content-type" for k in headers):
                headers["Content-Type"] = "application/json"
        else:
            kwargs["json"] = body
    try:
        url_check(url)
        with http_client().stream(method, url, timeout=timeout_of(timeout_ms), **kwargs) as response:
            status = response.status_code
            # The answer is stored: at most what a client could store itself in one body.
            raw = (
                read_head(response)
                if status >= 400
                else read_body(response, limit=min(answer_cap(), stored_reply_limit()))
            )
    except EgressRefused as exc:
        raise TaskFailure(
            f"{operation}: {exc}", error_type="transport", raw=f"{method} {url}: {exc.detail}"
        ) from exc
    except UpstreamUnreadable as exc:
        raise TaskFailure(f"{operation}: {exc}", error_type="provider", raw=f"{method} {url}: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - every transport failure becomes a task failure
        error = transport_error(exc, timeout_ms=timeout_ms, url=url)
        raise TaskFailure(
            f"{operation}: {specific_reason(error.reason, exc)}",
            error_type=error.error_type,
            raw=f"{method} {url}: {error.raw}",
        ) from exc
    text = raw.decode("utf-8", "replace")
    value = _parse(text) if text else None
    if status >= 400:
        message = body_message(text)
        reason = f"{operation}: HTTP {status}" + (f": {message}" if message else "")
        error_type = "rate_limit" if status == 429 else ("timeout" if status in (408, 504) else "provider")
        raise TaskFailure(
            reason,
            error_type=error_type,
            raw=raw_error_text(f"{method} {url} → HTTP {status}: {text[:8000]}"),
            output=redact_value(value, secret_fields=True),
            has_output=value is not None,
        )
    key = task.get("storeAs") or plain_task_id(task["id"])
    content = text if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    entry = {
        "kind": "data",
        "key": key,
        "task_id": plain_task_id(task["id"]),
        "value": value,
        "content": content[:4000],
        "tokens": text_tokens(content[:4000]),
    }
    return TaskResult(entries=[entry])
