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
4. the view: the Idempotency-Key and the body (common.http.body: content type, JSON, depth, unknown
   fields; common.messages.validate_messages) read into a frozen `DecorateRequest` or
   `ReportRequest`, the memory scoped to the key's project (404), the
   service call. By id and without an Idempotency-Key the memory is not read first: the
   service's own first statement on its row is scoped to the project (`scoped=True`: decorate's
   locked read, report's UPDATE or locked read), so decorate reads it once and report's common
   case not at all; a request that fails validation still answers 404 first for a memory that is
   not there;
5. any error in the SPEC §4.1 shape (common.errors.exception_answer).

It is reached two ways, both running this code: threadless_site.asgi sends a POST to these paths
straight here (on the sync-view threads, without Django's request cycle), and the Django URLs
(memories.api.urls → memories.api.hotroutes.HotRouteApi) call it for POST too (the test client,
a WSGI server, THREADLESS_WEB_THREADS=0). Other methods (OPTIONS, a 405) stay on DRF. On the ASGI
way the caller adds the headers Django's security middleware would (`serving.headers`); the body limit is the
caller's too (the ASGI reader, or ApiErrorMiddleware).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

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


@dataclasses.dataclass(frozen=True, slots=True)
class Route:
    """A hot path, read: which operation, on which memory (its id, or its external id)."""

    operation: str  # "decorate" or "report"
    ident: str  # the memory's id, or with `external` the app's own id for it
    external: bool

    @property
    def pattern(self) -> str:
        """The Django URL pattern of this route (memories.api.urls), the route label of its metrics."""
        if self.external:
            return f"v1/memories/external/<path:external_id>/{self.operation}"
        return f"v1/memories/<str:memory_id>/{self.operation}"


def route(path: str) -> Route | None:
    """The hot route of `path`, else None (the same paths the URLs take: `external/<path>` first,
    then `<str:memory_id>`)."""
    match = ROUTES.fullmatch(path)
    if match is None:
        return None
    external, external_id, memory_id, operation = match.groups()
    return Route(operation, external_id, True) if external else Route(operation, memory_id, False)


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


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DecorateRequest:
    """A decorate call, checked as far as the view checks it (the service checks `instructions`
    and `budget_tokens`): what memories.services.memory_decorate is called with."""

    idempotency_key: str | None
    messages: list[dict]
    instructions: object
    budget_tokens: object
    recall: bool
    store: bool  # False: a dry run
    memory_files: bool
    thread: str | None

    FIELDS = frozenset(
        {"instructions", "messages", "budget_tokens", "recall", "store", "memory_files", "thread"}
    )

    @classmethod
    def parse(cls, idempotency_key: str | None, data: dict) -> DecorateRequest:
        """400 for the first thing wrong, in DRF's order: the key, unknown fields, then each field."""
        key = services.check_idempotency_key(idempotency_key)
        reject_unknown(data, cls.FIELDS)
        memory_files = _bool(data, "memory_files", False)
        thread = thread_input(data)
        if data.get("messages") is None:
            raise InvalidRequest(
                "messages: is required (the new messages of this turn; "
                "[] builds the request from memory alone).",
                hint='Send {"messages": [{"role": "user", "content": "…"}]}.',
            )
        messages = validate_messages(data["messages"], allow_empty=True)
        return cls(
            idempotency_key=key,
            messages=messages,
            instructions=data.get("instructions"),
            budget_tokens=data.get("budget_tokens", 60000),
            store=_bool(data, "store", True),
            recall=_bool(data, "recall", True),
            memory_files=memory_files,
            thread=thread,
        )

    @property
    def stores(self) -> bool:
        """Whether the call writes to the memory. One that does not (a dry run) is not in the usage
        volume, and cannot leave the project scoping to its first write."""
        return self.store


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class ReportRequest:
    """A report call, checked: what memories.services.report_accept is called with."""

    idempotency_key: str | None
    messages: list[dict]
    failures: list[dict]
    thread: str | None

    FIELDS = frozenset({"messages", "failures", "thread"})
    stores = True  # as DecorateRequest.stores: a report always writes

    @classmethod
    def parse(cls, idempotency_key: str | None, data: dict) -> ReportRequest:
        key = services.check_idempotency_key(idempotency_key)
        reject_unknown(data, cls.FIELDS)
        thread = thread_input(data)
        messages = validate_messages(data.get("messages"), allow_empty=True)
        return cls(
            idempotency_key=key,
            messages=messages,
            failures=services.validate_failures(data.get("failures")),
            thread=thread,
        )


PARSERS: dict[str, Callable[[str | None, dict], DecorateRequest | ReportRequest]] = {
    "decorate": DecorateRequest.parse,
    "report": ReportRequest.parse,
}


def _decorate(project, memory: Memory, call: DecorateRequest, *, scoped: bool) -> tuple[int, bytes]:
    def run():
        answer = services.memory_decorate(
            memory=memory,
            messages=call.messages,
            instructions=call.instructions,
            budget_tokens=call.budget_tokens,
            recall=call.recall,
            store=call.store,
            scoped=scoped,
            memory_files=call.memory_files,
            thread=call.thread,
        )
        return 200, orjson.dumps(answer), call.store  # a dry run records nothing

    return services.idempotent_call(
        project=project, memory=memory, scope=f"decorate:{memory.id}", key=call.idempotency_key, run=run
    )


def _report(project, memory: Memory, call: ReportRequest, *, scoped: bool) -> tuple[int, bytes]:
    def run():
        answer = services.report_accept(
            memory=memory, messages=call.messages, failures=call.failures, scoped=scoped, thread=call.thread
        )
        metrics.report(accepted=True, messages=answer["accepted"])
        return 202, orjson.dumps(answer), True

    return services.idempotent_call(
        project=project, memory=memory, scope=f"report:{memory.id}", key=call.idempotency_key, run=run
    )


def _run(
    project, memory: Memory, call: DecorateRequest | ReportRequest, *, scoped: bool
) -> tuple[int, bytes]:
    if isinstance(call, DecorateRequest):
        return _decorate(project, memory, call, scoped=scoped)
    return _report(project, memory, call, scoped=scoped)


def _view(target: Route, project, headers: dict, raw: bytes) -> tuple[int, bytes, bool]:
    """The view's part: (status, body, whether the call counts in the usage volume)."""
    parse = PARSERS[target.operation]
    idempotency_key = headers.get("idempotency-key")
    if target.external:
        call = parse(idempotency_key, _body(headers.get("content-type", ""), raw))
        return (*_run(project, external_memory(project, target.ident), call, scoped=False), call.stores)
    # By id, storing, without an Idempotency-Key, the memory is not read first: its first statement
    # in the service (decorate's locked read, report's UPDATE) is scoped to the project (404 there).
    try:
        call = parse(idempotency_key, _body(headers.get("content-type", ""), raw))
        if call.idempotency_key is None and call.stores:
            return (*_run(project, Memory(id=target.ident, project=project), call, scoped=True), True)
    except (ApiError, drf.APIException):
        selectors.memory_get(project=project, memory_id=target.ident)  # a missing memory is a 404 first
        raise
    memory = selectors.memory_get(project=project, memory_id=target.ident)
    return (*_run(project, memory, call, scoped=False), call.stores)


def answer(
    target: Route, headers: dict, raw: bytes, request_id: str
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
        item = usage.operation_item(key.project_id, target.operation)
        key, counts = ratelimit.check_and_count(call, key, (item,))
        taken = [item[0]]
        status, body, counted = _view(target, key.project, headers, raw)
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
        if target.operation == "report":
            metrics.report(accepted=False)
        status, extra, body = exception_answer(exc, request_id=request_id, limits=call.ratelimit_headers)
        out = [("Content-Type", JSON), *extra.items()]
    out.append(("Allow", ALLOW))
    names = {name for name, _ in out}
    out.extend((name, value) for name, value in (call.ratelimit_headers or {}).items() if name not in names)
    out.append(("X-Request-Id", request_id))
    return status, out, body


def django_answer(request, target: Route):
    """`answer` for the Django URLs of these routes (memories.api.hotroutes), as an HttpResponse."""
    from django.http import HttpResponse

    meta = request.META
    headers = {
        "authorization": meta.get("HTTP_AUTHORIZATION", ""),
        "content-type": meta.get("CONTENT_TYPE", ""),
        "accept": meta.get("HTTP_ACCEPT", ""),
    }
    if "HTTP_IDEMPOTENCY_KEY" in meta:
        headers["idempotency-key"] = meta["HTTP_IDEMPOTENCY_KEY"]
    status, out, body = answer(target, headers, request.body, getattr(request, "request_id", "") or "")
    response = HttpResponse(body, status=status)
    for name, value in out:
        response[name] = value
    return response
