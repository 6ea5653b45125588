"""The two hot routes, decorate and report (and their external-id twins), as one plain handler.

STYLE exception (hot path): these two calls are every turn of every agent, and under load the
serving layer around them (Django's middleware chain, DRF's dispatch, a second read of the
memory row, a usage count in a round trip of its own) cost more CPU than the service calls
themselves (docs/benchmarks.md §8). So `answer()` does, for a POST, what DRF and the
middleware did, in the same order and through the same functions (no second copy of a rule):

1. the Accept header (406 when JSON is not acceptable, as DRF's negotiation);
2. the key (projects.auth.key_for_header / require_project_key: 401);
3. the rate limit, the plan allowance, the key generation *and* the operation's usage count in
   one counter round trip (projects.ratelimit.check_and_count: 429; the count is taken back
   when the call then fails, or is a dry run);
4. the view: the Idempotency-Key, the body (common.http.body: content type, JSON, depth, unknown
   fields; common.messages.validate_messages), the memory scoped to the key's project (404), the
   service call. By id and without an Idempotency-Key the memory is not read first: the
   service's own first statement on its row is scoped to the project (`scoped=True`: decorate's
   locked read, report's UPDATE or locked read), so decorate reads it once and report's common
   case not at all; a request that fails validation still answers 404 first for a memory that is
   not there, as before;
5. any error in the SPEC §4.1 shape (common.errors.exception_answer).

It is reached two ways, both running this code: threadless_site.asgi sends a POST to these paths
straight here (on the sync-view threads, without Django's request cycle), and the Django URLs
(memories.api.urls → DecorateApi, …) call it for POST too (the test client, a WSGI server,
THREADLESS_WEB_THREADS=0). Other methods (OPTIONS, a 405) stay on DRF. On the ASGI way the caller adds
the headers Django's security middleware would (`serving.headers`); the body limit is the
caller's too (the ASGI reader, or ApiErrorMiddleware).
"""

from __future__ import annotations

import re

import orjson
from rest_framework import exceptions as drf

from common import counters, metrics
from common.errors import ApiError, InvalidRequest, exception_answer
from common.http.body import json_object, parse_json, reject_unknown
from common.messages import validate_messages
from memories import selectors, services
from memories.models import Memory
from projects import auth, ratelimit, usage

ALLOW = "POST, OPTIONS"  # what DRF's Allow header says for these views
ROUTES = re.compile(r"/v1/memories/(?:(external)/(.+)|([^/]+))/(decorate|report)")
JSON = "application/json"


class Call:
    """What the key, the limits and the error answer need of a request (projects.ratelimit
    takes it where it takes a Django request)."""

    __slots__ = ("META", "api_key", "key_unconfirmed", "ratelimit_headers", "request_id")

    def __init__(self, authorization: str, request_id: str) -> None:
        self.META = {"HTTP_AUTHORIZATION": authorization}
        self.api_key = None
        self.key_unconfirmed = None
        self.ratelimit_headers = None
        self.request_id = request_id


def route_pattern(operation: str, external: bool) -> str:
    """The Django URL pattern of a hot route (memories.api.urls), the route label of its metrics."""
    return (
        f"v1/memories/external/<path:external_id>/{operation}"
        if external
        else f"v1/memories/<str:memory_id>/{operation}"
    )


def route(path: str) -> tuple[str, str, bool] | None:
    """(operation, id, by external id) for a hot path, else None (the same paths the URLs take:
    `external/<path>` first, then `<str:memory_id>`)."""
    match = ROUTES.fullmatch(path)
    if match is None:
        return None
    external, external_id, memory_id, operation = match.groups()
    return (operation, external_id, True) if external else (operation, memory_id, False)


def _acceptable(accept: str) -> bool:
    """DRF's content negotiation with one JSON renderer: no Accept, or any range JSON is in."""
    if not accept:
        return True
    for part in accept.split(","):
        media = part.split(";", 1)[0].strip().lower()
        if media in ("*/*", "application/*", JSON) or not media:
            return True
    return False


def _body(content_type: str, raw: bytes) -> dict:
    """The request body as DRF's parser read it: empty is {}; otherwise JSON only."""
    if not raw:
        return json_object({})
    if content_type.split(";", 1)[0].strip().lower() != JSON:
        raise drf.UnsupportedMediaType(content_type)
    return json_object(parse_json(raw))


def _bool(data: dict, name: str, default: bool) -> bool:
    value = data.get(name, default)
    if not isinstance(value, bool):
        raise InvalidRequest(f"{name}: must be true or false.")
    return value


def thread_input(data: dict) -> str | None:
    """The body's `thread` (SPEC 4.10): absent is the default thread; else external_id's rules,
    400 naming the field."""
    thread = data.get("thread")
    return None if thread is None else services.external_id_check(thread, field="thread")


def external_memory(project, external_id: str) -> Memory:
    """The memory with this `external_id` in the project, created on first use (get-or-create)."""
    services.external_id_check(external_id)
    memory, _created = services.memory_create(project=project, external_id=external_id)
    return memory


def decorate_input(idempotency_key: str | None, data: dict) -> tuple[str | None, dict, list, bool, bool]:
    key = services.check_idempotency_key(idempotency_key)
    reject_unknown(
        data, {"instructions", "messages", "budget_tokens", "recall", "store", "memory_files", "thread"}
    )
    _bool(data, "memory_files", False)
    thread_input(data)
    if data.get("messages") is None:
        raise InvalidRequest(
            "messages: is required (the new messages of this turn; [] builds the request from memory alone).",
            hint='Send {"messages": [{"role": "user", "content": "…"}]}.',
        )
    messages = validate_messages(data["messages"], allow_empty=True)
    return key, data, messages, _bool(data, "store", True), _bool(data, "recall", True)


def report_input(idempotency_key: str | None, data: dict) -> tuple[str | None, list, list, str | None]:
    key = services.check_idempotency_key(idempotency_key)
    reject_unknown(data, {"messages", "failures", "thread"})
    thread = thread_input(data)
    messages = validate_messages(data.get("messages"), allow_empty=True)
    return key, messages, services.validate_failures(data.get("failures")), thread


def _decorate(
    project,
    memory: Memory,
    scoped: bool,
    key: str | None,
    data: dict,
    messages: list,
    store: bool,
    recall_on: bool,
) -> tuple[int, bytes]:
    def run():
        answer = services.memory_decorate(
            memory=memory,
            messages=messages,
            instructions=data.get("instructions"),
            budget_tokens=data.get("budget_tokens", 60000),
            recall=recall_on,
            store=store,
            scoped=scoped,
            memory_files=data.get("memory_files", False),
            thread=data.get("thread"),
        )
        return 200, orjson.dumps(answer), store  # a dry run records nothing

    return services.idempotent_call(
        project=project, memory=memory, scope=f"decorate:{memory.id}", key=key, run=run
    )


def _report(
    project,
    memory: Memory,
    scoped: bool,
    key: str | None,
    messages: list,
    failures: list,
    thread: str | None,
) -> tuple[int, bytes]:
    def run():
        answer = services.report_accept(
            memory=memory, messages=messages, failures=failures, scoped=scoped, thread=thread
        )
        metrics.report(accepted=True, messages=answer["accepted"])
        return 202, orjson.dumps(answer), True

    return services.idempotent_call(
        project=project, memory=memory, scope=f"report:{memory.id}", key=key, run=run
    )


def _view(
    operation: str, ident: str, external: bool, project, headers: dict, raw: bytes
) -> tuple[int, bytes, bool]:
    """The view's part: (status, body, whether the call counts in the usage volume)."""
    idempotency_key = headers.get("idempotency-key")
    if external:
        if operation == "decorate":
            checked = decorate_input(idempotency_key, _body(headers.get("content-type", ""), raw))
            status, body = _decorate(project, external_memory(project, ident), False, *checked)
            return status, body, checked[3]
        checked = report_input(idempotency_key, _body(headers.get("content-type", ""), raw))
        return (*_report(project, external_memory(project, ident), False, *checked), True)
    # By id without an Idempotency-Key, the memory is not read first: its first statement in the
    # service (decorate's locked read, report's UPDATE) is scoped to the project (404 there).
    try:
        if operation == "report":
            checked = report_input(idempotency_key, _body(headers.get("content-type", ""), raw))
            if checked[0] is None:
                return (*_report(project, Memory(id=ident, project=project), True, *checked), True)
        else:
            checked = decorate_input(idempotency_key, _body(headers.get("content-type", ""), raw))
            if checked[3] and checked[0] is None:  # store, no Idempotency-Key
                return (*_decorate(project, Memory(id=ident, project=project), True, *checked), True)
    except (ApiError, drf.APIException):
        selectors.memory_get(project=project, memory_id=ident)  # a missing memory is a 404 first, as before
        raise
    memory = selectors.memory_get(project=project, memory_id=ident)
    if operation == "report":
        return (*_report(project, memory, False, *checked), True)
    return (*_decorate(project, memory, False, *checked), checked[3])


def answer(
    operation: str, ident: str, external: bool, headers: dict, raw: bytes, request_id: str
) -> tuple[int, list[tuple[str, str]], bytes]:
    """One POST to a hot route: (status, headers, body). `headers` holds the request's
    authorization, content-type, idempotency-key and accept values by lowercase name."""
    call = Call(headers.get("authorization", ""), request_id)
    taken: list[str] = []
    try:
        if not _acceptable(headers.get("accept", "")):
            raise drf.NotAcceptable()
        key, call.key_unconfirmed = auth.key_for_header(call.META["HTTP_AUTHORIZATION"], deferred=True)
        call.api_key = key
        key = auth.require_project_key(key)
        item = usage.operation_item(key.project_id, operation)
        key, counts = ratelimit.check_and_count(call, key, (item,))
        taken = [item[0]]
        status, body, counted = _view(operation, ident, external, key.project, headers, raw)
        if counted:
            taken = []
            usage.seeded(item[0], counts[0])
        else:
            counters.decr_many(taken)  # a dry run is not in the volume
            taken = []
        out = [("Content-Type", JSON)]
    except Exception as exc:  # noqa: BLE001 - every error answers in the SPEC 4.1 shape
        if taken:
            counters.decr_many(taken)
        if operation == "report":
            metrics.report(accepted=False)
        status, extra, body = exception_answer(exc, request_id=request_id, limits=call.ratelimit_headers)
        out = [("Content-Type", JSON), *extra.items()]
    out.append(("Allow", ALLOW))
    names = {name for name, _ in out}
    out.extend((name, value) for name, value in (call.ratelimit_headers or {}).items() if name not in names)
    out.append(("X-Request-Id", request_id))
    return status, out, body


def django_answer(request, operation: str, ident: str, external: bool):
    """`answer` for the Django URLs of these routes (memories.api.views), as an HttpResponse."""
    from django.http import HttpResponse

    meta = request.META
    headers = {
        "authorization": meta.get("HTTP_AUTHORIZATION", ""),
        "content-type": meta.get("CONTENT_TYPE", ""),
        "accept": meta.get("HTTP_ACCEPT", ""),
    }
    if "HTTP_IDEMPOTENCY_KEY" in meta:
        headers["idempotency-key"] = meta["HTTP_IDEMPOTENCY_KEY"]
    status, out, body = answer(
        operation, ident, external, headers, request.body, getattr(request, "request_id", "") or ""
    )
    response = HttpResponse(body, status=status)
    for name, value in out:
        response[name] = value
    return response
