"""What the sync and async clients share: configuration, request bodies, answers, on_error."""

from __future__ import annotations

import json
import logging
import os
import weakref
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any
from urllib.parse import quote, unquote

from ._errors import ThreadlessConnectionError, ThreadlessError, is_fallback_status
from ._tail import TailStore, split_system, tail_key
from ._types import DecoratedRequest, Memory, Page
from ._version import __version__

log = logging.getLogger("threadless")

DEFAULT_BASE_URL = "http://127.0.0.1:8000"
REPORT_WAIT_SECONDS = 2.0
OnError = Callable[[BaseException, dict[str, Any]], Any]


_clients: weakref.WeakSet[Any] = weakref.WeakSet()  # every live client, for os.register_at_fork


def _after_fork_in_child() -> None:
    # The child has one thread and copies of the parent's sockets, locks and queues: each client
    # drops them (its pool, its pending reports, its worker threads) and builds fresh ones on use.
    for client in list(_clients):
        try:
            client._after_fork()
        except Exception:  # never break the fork for a client's sake
            log.exception("threadless: resetting a client after fork failed")


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def reset_after_fork(client: Any) -> None:
    """Have ``client._after_fork()`` called in the child of every later os.fork()."""
    _clients.add(client)


def resolve_config(
    api_key: str | None, base_url: str | None, timeout: float, tail_tokens: int, max_tails: int
) -> tuple[str, str]:
    api_key = api_key or os.environ.get("THREADLESS_API_KEY") or ""
    if not api_key:
        raise ThreadlessError(
            "No API key: pass api_key= or set THREADLESS_API_KEY.",
            code="missing_api_key",
            hint="Create a project key in the console (or `manage.py create_key`) and pass it in.",
            retryable=False,
        )
    base = (base_url or os.environ.get("THREADLESS_BASE_URL") or DEFAULT_BASE_URL).strip().rstrip("/")
    if base.endswith("/v1"):  # forgiving: the origin is asked for, but ".../v1" is an easy slip
        base = base[:-3]
    if not base.startswith(("http://", "https://")):
        raise ThreadlessError(
            f"base_url: {base!r} is not an http(s) URL.",
            code="invalid_request",
            hint="Pass the server's origin, e.g. http://127.0.0.1:8000.",
            retryable=False,
        )
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise ThreadlessError(
            "timeout: must be a positive number of seconds.", code="invalid_request", retryable=False
        )
    if not (isinstance(tail_tokens, int) and tail_tokens > 0):
        raise ThreadlessError(
            "tail_tokens: must be a positive integer.", code="invalid_request", retryable=False
        )
    if not (isinstance(max_tails, int) and max_tails >= 0):
        raise ThreadlessError("max_tails: must be an integer ≥ 0.", code="invalid_request", retryable=False)
    return api_key, base + "/v1"


def default_headers(api_key: str) -> dict[str, Any]:
    return {
        "Authorization": f"Bearer {api_key}",
        "User-Agent": f"threadless-python/{__version__}",
        "Accept": "application/json",
    }


def path_of(memory_id: str, suffix: str = "") -> str:
    if not isinstance(memory_id, str) or not memory_id:
        raise ThreadlessError(
            "memory_id: must be a non-empty string (the id create() returned).",
            code="invalid_request",
            retryable=False,
        )
    return "/memories/" + quote(memory_id, safe="") + suffix


def target(memory_id: str | None, external_id: str | None, thread: str | None = None) -> tuple[str, str]:
    """(tail key, path of the memory) for a memory id or an app's own external id, and a thread.

    External ids use the get-or-create routes (``/memories/external/{external_id}/…``), and their
    tail is keyed ``ext:{external_id}`` (server ids start with ``mem_``, so the two never meet).
    Each thread has its own tail (``threadless._tail.tail_key``).
    """
    check_thread(thread)
    if external_id is not None:
        if memory_id is not None:
            raise ThreadlessError(
                "Pass memory_id or external_id, not both.", code="invalid_request", retryable=False
            )
        if not isinstance(external_id, str) or not external_id:
            raise ThreadlessError(
                "external_id: must be a non-empty string (your own id for the memory).",
                code="invalid_request",
                retryable=False,
            )
        key, path = "ext:" + external_id, "/memories/external/" + quote(external_id, safe="")
        return tail_key(key, thread), path
    if memory_id is None:
        raise ThreadlessError(
            "Pass memory_id (the id create() returned) or external_id= (your own id).",
            code="invalid_request",
            retryable=False,
        )
    return tail_key(memory_id, thread), path_of(memory_id)


def check_thread(thread: str | None) -> None:
    if thread is not None and (not isinstance(thread, str) or not thread):
        raise ThreadlessError(
            "thread: must be a non-empty string (your own id for the conversation), or None for the "
            "memory's default thread.",
            code="invalid_request",
            retryable=False,
        )


def memory_keys(path: str, external_id: str | None) -> list[str]:
    """The tail keys of the memory at ``path`` (``/memories/{id}``): its id's, and its external
    id's when it was named by one (decorate keys a memory named by external id ``ext:{id}``)."""
    keys = [unquote(path.rsplit("/", 1)[1])]
    if external_id is not None:
        keys.append("ext:" + external_id)
    return keys


def thread_path(base_path: str, thread: str | None) -> str:
    """``…/threads`` of a memory, or ``…/threads/{thread}``."""
    if thread is None:
        return base_path + "/threads"
    check_thread(thread)
    return base_path + "/threads/" + quote(thread, safe="")


def no_memory(external_id: str) -> ThreadlessError:
    """What reading a memory by an external id that no memory has yet answers (reading creates none)."""
    return ThreadlessError(
        f"No memory has external_id {external_id!r} yet.",
        status=404,
        code="not_found",
        hint="decorate, report or create(external_id=…) create it on first use.",
        retryable=False,
    )


def error_context(
    operation: str, memory_id: str | None, external_id: str | None, thread: str | None = None
) -> dict[str, Any]:
    context = {"operation": operation, "memory_id": memory_id}
    if external_id is not None:
        context["external_id"] = external_id
    if thread is not None:
        context["thread"] = thread
    return context


def unexpected(error: Exception, what: str) -> ThreadlessError:
    """An error nobody planned for (a bug in a transport, a closed event loop): for decorate it is
    one more way of getting no usable answer, so it falls back like a network error."""
    wrapped = ThreadlessConnectionError(
        f"{what}: unexpected {type(error).__name__}: {error}",
        code="client_error",
        hint="A problem inside the client or its transport; decorate fell back to the local tail.",
    )
    wrapped.__cause__ = error
    return wrapped


def encode(body: Mapping[str, Any]) -> bytes:
    try:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    except (TypeError, ValueError) as exc:
        raise ThreadlessError(
            f"body: not JSON-serialisable ({exc}).",
            code="invalid_request",
            hint="Messages must be plain dicts of strings, lists and numbers.",
            retryable=False,
        ) from exc


def json_headers(idempotency_key: str | None = None) -> dict[str, Any]:
    headers = {"Content-Type": "application/json"}
    if idempotency_key is not None:
        headers["Idempotency-Key"] = str(idempotency_key)
    return headers


def decorate_body(
    messages: Sequence[Mapping[str, Any]],
    instructions: str | None,
    budget_tokens: int | None,
    recall: bool | None,
    store: bool | None,
    thread: str | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": messages}
    if thread is not None:
        body["thread"] = thread
    if instructions is not None:
        body["instructions"] = instructions
    if budget_tokens is not None:
        body["budget_tokens"] = budget_tokens
    if recall is not None:
        body["recall"] = recall
    if store is not None:
        body["store"] = store
    return body


def report_body(
    messages: list[Any], failures: Sequence[Mapping[str, Any]] | None, thread: str | None
) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": messages}
    if failures:
        body["failures"] = list(failures)
    if thread is not None:
        body["thread"] = thread
    return body


def search_body(
    query: Any,
    limit: int | None,
    thread: str | None,
    *,
    role: str | None = None,
    after: datetime | str | None = None,
    before: datetime | str | None = None,
    min_score: float | None = None,
    include: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The search's body. ``after`` / ``before``: an aware ``datetime`` or ISO 8601 with its offset
    (the server checks the rest and names the field it refuses)."""
    if not isinstance(query, str) or not query:
        raise ThreadlessError("query: must be a non-empty string.", code="invalid_request", retryable=False)
    check_thread(thread)
    body: dict[str, Any] = {"query": query}
    if limit is not None:
        body["limit"] = limit
    if thread is not None:
        body["thread"] = thread
    if role is not None:
        body["role"] = role
    for name, at in (("after", after), ("before", before)):
        if isinstance(at, datetime):
            if at.tzinfo is None or at.utcoffset() is None:
                raise ThreadlessError(
                    f"{name}: a datetime without a time zone; pass an aware one "
                    "(e.g. datetime.now(timezone.utc)).",
                    code="invalid_request",
                    retryable=False,
                )
            at = at.isoformat()
        if at is not None:
            body[name] = at
    if min_score is not None:
        body["min_score"] = min_score
    if include is not None:
        body["include"] = [include] if isinstance(include, str) else list(include)
    return body


def import_body(messages: Any, thread: str | None) -> dict[str, Any]:
    """The history import's body: each message's ``created_at`` (an aware ``datetime`` or an ISO
    8601 string with its offset) as the server reads it; the caller's dicts are left unchanged."""
    check_thread(thread)
    out = []
    for i, message in enumerate(as_messages(messages)):
        at = message.get("created_at") if isinstance(message, Mapping) else None
        if isinstance(at, datetime):
            if at.tzinfo is None or at.utcoffset() is None:
                raise ThreadlessError(
                    f"messages[{i}].created_at: a datetime without a time zone; pass an aware one "
                    "(e.g. datetime.now(timezone.utc)).",
                    code="invalid_request",
                    retryable=False,
                )
            message = {**message, "created_at": at.isoformat()}
        out.append(message)
    body: dict[str, Any] = {"messages": out}
    if thread is not None:
        body["thread"] = thread
    return body


def as_messages(messages: Any) -> list[Any]:
    if (
        isinstance(messages, Mapping)
        or isinstance(messages, (str, bytes))
        or not isinstance(messages, Sequence)
    ):
        raise ThreadlessError(
            "messages: must be a list of message dicts.", code="invalid_request", retryable=False
        )
    return list(messages)


def answer_json(status: int, content: bytes, headers: Any, url: str = "") -> Any:
    """The JSON of a 2xx answer; raises ThreadlessError for anything else.

    A 2xx whose body is not JSON counts as a failed service answer (``invalid_response``,
    retryable), so decorate falls back on it like on a 5xx.
    """
    if status < 200 or status >= 300:
        raise ThreadlessError.from_response(status, content, headers, url)
    if not content:
        return None
    try:
        return json.loads(content)
    except ValueError as exc:
        raise ThreadlessError(
            f"HTTP {status} with a body that is not JSON.",
            status=status,
            code="invalid_response",
            hint="A proxy or a broken server answered; decorate fell back to the local tail.",
            request_id=headers.get("x-request-id"),
            retryable=True,
        ) from exc


def should_fall_back(error: ThreadlessError) -> bool:
    """Network errors, timeouts, 5xx, 429, 408 and broken answers: fall back. Other 4xx: raise.

    So do the SDK's own "you used it wrong" errors (a closed client), which never reached us.
    """
    if error.status is None:
        return error.retryable
    return is_fallback_status(error.status) or error.code == "invalid_response"


def decorated_from(
    memory_id: str | None,
    data: Any,
    status: int,
    headers: Any,
    external_id: str | None = None,
    thread: str | None = None,
) -> DecoratedRequest:
    if not (
        isinstance(data, dict)
        and isinstance(data.get("instructions"), str)
        and isinstance(data.get("messages"), list)
    ):
        raise ThreadlessError(
            f"HTTP {status}: the answer is not a decorated request.",
            status=status,
            code="invalid_response",
            request_id=headers.get("x-request-id"),
            retryable=True,
            hint="Check that base_url is the Threadless server's origin.",
        )
    return DecoratedRequest(
        memory_id=data.get("memory_id") or memory_id,
        external_id=external_id,
        instructions=data["instructions"],
        messages=data["messages"],
        context_text=data.get("context_text") or "",
        turn=data.get("turn"),
        context=data.get("context") or {},
        usage=data.get("usage") or {},
        degraded=False,
        thread=thread,
    )


def degraded_request(
    tails: TailStore,
    key: str,
    messages: list[Any],
    instructions: str | None,
    error: Exception,
    seq: int,
    memory_id: str | None = None,
    external_id: str | None = None,
    thread: str | None = None,
) -> DecoratedRequest:
    new, own = split_system(messages, instructions)
    text, context_text, window = tails.fallback(key, new, own, seq=seq)
    if memory_id is None:
        memory_id = tails.memory_id_of(key)  # known from an earlier successful decorate, else None
    return DecoratedRequest(
        memory_id=memory_id,
        instructions=text,
        messages=window,
        context_text=context_text,
        turn=None,
        degraded=True,
        error=error,
        external_id=external_id,
        thread=thread,
    )


def refresh_tail(tails: TailStore, key: str, request: DecoratedRequest, store: bool | None, seq: int) -> None:
    # A dry run (store=False) mirrors the answer too, but stores no user message, so it does not
    # end a degraded state (the reports that follow would have nothing to attach to). Same in TS.
    # ``seq`` orders decorates by when they started: a slow older answer never replaces a newer one.
    tails.refresh(
        key,
        instructions=request.instructions,
        context_text=request.context_text,
        messages=request.messages,
        clear_degraded=store is not False,
        seq=seq,
        server_id=request.memory_id,
    )


def call_on_error(handler: OnError | None, error: BaseException, context: dict[str, Any]) -> Any:
    """Tell the caller's on_error; whatever it raises is logged, never passed on."""
    if handler is None:
        log.warning(
            "threadless %s on %s failed: %s", context.get("operation"), context.get("memory_id"), error
        )
        return None
    try:
        return handler(error, context)
    except Exception:  # the callback's own bug must not stop the agent
        log.exception(
            "threadless: on_error raised while handling %s on %s; ignored",
            context.get("operation"),
            context.get("memory_id"),
        )
        return None


def memory_page(data: dict[str, Any]) -> Page:
    return Page([Memory.from_json(m) for m in data.get("data") or []], data.get("next_cursor"))


def list_params(
    limit: int | None, cursor: str | None, external_id: str | None, metadata: Mapping[str, Any] | None
) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if limit is not None:
        params["limit"] = limit
    if cursor is not None:
        params["cursor"] = cursor
    if external_id is not None:
        params["external_id"] = external_id
    for key, value in (metadata or {}).items():
        params[f"metadata.{key}"] = value
    return params


def memory_fields(
    metadata: Any = None, external_id: Any = None, instructions: Any = None, policy: Any = None
) -> dict[str, Any]:
    fields = {
        "metadata": metadata,
        "external_id": external_id,
        "instructions": instructions,
        "policy": policy,
    }
    return {k: v for k, v in fields.items() if v is not None}
