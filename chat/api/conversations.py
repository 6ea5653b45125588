"""/v1 conversation routes: project keys, or the agent's publishable key + the client token.

Plain async Django views (not DRF): say streams SSE from an async generator under ASGI, and
every route answers CORS for the agent's `allowedOrigins` (publishable keys live in browsers).
Provider text never reaches a publishable-key caller: snapshots and events go through
`selectors.public_snapshot` / `public_event` for them. Publishable-key callers also meet the
end-user limits of `chat.limits` (per-address and per-conversation buckets, input size, the
agent's concurrency cap and daily budget, no metadata); streamed turns run on `chat.turnpool`.
"""

from __future__ import annotations

import asyncio
import logging

import orjson
from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from chat import limits, runner, selectors, services
from chat.models import Agent, Conversation, TurnEvent
from common.errors import (
    ApiError,
    InvalidRequest,
    NotFound,
    Unauthorized,
    exception_response,
)
from common.http.body import json_object_body
from common.redaction import echo
from common.sigterm import install_if_uvicorn
from memories.models import Turn
from projects.auth import key_from_plaintext, key_from_request
from projects.models import ApiKey
from projects.ratelimit import check_quota, check_rate

log = logging.getLogger("threadless.chat")

CORS_HEADERS = "Authorization, Content-Type, X-Client-Token, Last-Event-ID"


class MethodNotAllowed(ApiError):
    status = 405
    code = "method_not_allowed"
    hint = "See /v1/docs for the methods this path takes."


def keepalive_seconds() -> float:
    return float(settings.THREADLESS_SSE_KEEPALIVE_SECONDS)


# --- auth, scope, CORS -------------------------------------------------------------------------


def _authenticate(request, *, query_key: bool) -> ApiKey:
    """The same key check and limits as the DRF routes (projects.auth, projects.ratelimit);
    the events route also takes a publishable key as ?key= (EventSource sends no headers)."""
    key = key_from_request(request)
    if key is None and query_key and request.GET.get("key"):
        key = key_from_plaintext(request.GET["key"])
        if key.kind != ApiKey.Kind.PUBLISHABLE:
            raise Unauthorized(
                "Only a publishable key may be passed as ?key=; send a project key in the "
                "Authorization header.",
                hint="Never put a project key in a URL.",
            )
        request.api_key = key
    if key is None:
        raise Unauthorized("No API key was sent.")
    check_rate(request, key)
    if key.kind == ApiKey.Kind.PUBLISHABLE:
        limits.check_address_rate(request, key)
    check_quota(request, key)
    return key


def _client_token(request) -> str:
    return request.headers.get("X-Client-Token", "") or request.GET.get("client_token", "")


def _conversation(request, key: ApiKey, conversation_id: str) -> Conversation:
    """Project scope, then for publishable keys: its own agent and the right client token (else 404)."""
    conversation = selectors.conversation_get(project=key.project, conversation_id=conversation_id)
    if key.kind == ApiKey.Kind.PUBLISHABLE:
        if conversation.agent_id != key.agent_id or not selectors.client_token_matches(
            conversation, _client_token(request)
        ):
            raise NotFound(
                f"No conversation '{conversation_id}' for this key and client token.",
                hint="Send the clientToken the conversation was created with as X-Client-Token.",
            )
        limits.check_conversation_rate(request, conversation)
    return conversation


def _agent_for_cors(kwargs: dict) -> Agent | None:
    if "agent_id" in kwargs:
        return Agent.objects.filter(pk=kwargs["agent_id"]).first()
    if "conversation_id" in kwargs:
        return Agent.objects.filter(conversations__pk=kwargs["conversation_id"]).first()
    return None


def _cors(request, response, agent: Agent | None, *, preflight: bool = False):
    origin = request.headers.get("Origin", "").rstrip("/")
    response["Vary"] = "Origin"
    if origin and agent is not None and origin in agent.allowed_origins:
        response["Access-Control-Allow-Origin"] = origin
        response["Access-Control-Expose-Headers"] = "X-Request-Id, Retry-After"
        if preflight:
            response["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
            response["Access-Control-Allow-Headers"] = CORS_HEADERS
            response["Access-Control-Max-Age"] = "600"
    return response


def _json(data, status: int = 200) -> HttpResponse:
    return HttpResponse(orjson.dumps(data), status=status, content_type="application/json")


def endpoint(*methods: str, query_key: bool = False):
    """Auth + CORS + the one error shape around an async handler(request, key, **kwargs)."""

    def deco(handler):
        async def view(request, **kwargs):
            install_if_uvicorn()  # in case the server skipped the lifespan startup
            agent = None
            try:
                agent = await sync_to_async(_agent_for_cors)(kwargs)
                if request.method == "OPTIONS":
                    return _cors(request, HttpResponse(status=204), agent, preflight=True)
                if request.method not in methods:
                    raise MethodNotAllowed(f"Method {echo(request.method, 32)} is not allowed on this path.")
                key = await sync_to_async(_authenticate)(request, query_key=query_key)
                response = await handler(request, key, **kwargs)
            except Exception as exc:  # noqa: BLE001 - every failure answers in the one error shape
                response = exception_response(request, exc)
            # X-RateLimit-* go on every answer through the middleware (request.ratelimit_headers).
            return _cors(request, response, agent)

        view.__name__ = handler.__name__
        view.__doc__ = handler.__doc__
        return csrf_exempt(view)

    return deco


def _public(key: ApiKey) -> bool:
    return key.kind == ApiKey.Kind.PUBLISHABLE


# --- SSE ---------------------------------------------------------------------------------------


def sse_frame(event: dict) -> bytes:
    head = (
        f"id: {event['id']}\nevent: {event['event']}\n".encode()
        if event.get("id")
        else f"event: {event['event']}\n".encode()
    )
    return head + b"data: " + orjson.dumps(event["data"]) + b"\n\n"


async def sse_body(events, *, public: bool):
    """SSE frames from an event iterator, with a keepalive comment while nothing happens.

    A client disconnect raises CancelledError here: the pump is cancelled and the error re-raised;
    the turn itself runs in its own thread and completes.
    """
    queue: asyncio.Queue = asyncio.Queue()

    async def pump():
        try:
            async for event in events:
                await queue.put(event)
        except Exception as exc:  # noqa: BLE001
            log.exception("event stream failed")
            await queue.put(
                {
                    "id": 0,
                    "event": "error",
                    "data": {"message": "Something went wrong on our side.", "requestId": ""},
                }
            )
            del exc
        finally:
            await queue.put(None)

    task = asyncio.create_task(pump())
    try:
        yield b": stream open\n\n"
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), timeout=keepalive_seconds())
            except TimeoutError:
                yield b": keepalive\n\n"
                continue
            if event is None:
                return
            yield sse_frame(selectors.public_event(event) if public else event)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        if not task.done():
            task.cancel()


def sse_response(events, *, public: bool) -> StreamingHttpResponse:
    response = StreamingHttpResponse(sse_body(events, public=public), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


def _wants_sse(request) -> bool:
    return "text/event-stream" in request.headers.get("Accept", "")


# --- views -------------------------------------------------------------------------------------


def _create(request, key: ApiKey, agent_id: str) -> dict:
    data = json_object_body(request.body, {"metadata", "external_id"})
    agent = Agent.objects.select_related("project").filter(project=key.project, pk=agent_id).first()
    if agent is None or (_public(key) and key.agent_id != agent.id):
        raise NotFound(
            f"No agent '{agent_id}' for this key.", hint="Use an id that POST /v1/agents returned."
        )
    if _public(key):
        limits.check_no_metadata(data)
        if "external_id" in data:
            # Whoever holds a publishable key (it sits in a web page) could otherwise read and
            # write any subject's memory by naming it.
            raise InvalidRequest(
                "external_id: a publishable key cannot choose whose memory a conversation uses; "
                "an end user's conversation has a memory of its own.",
                hint="Create the conversation from your server with a project key and its external_id, "
                "then hand the end user its id.",
            )
    conversation, token = services.conversation_create(
        agent=agent,
        metadata=data.get("metadata"),
        with_client_token=_public(key),
        external_id=data.get("external_id"),
    )
    out = selectors.conversation_json(conversation=conversation)
    if token:
        out["clientToken"] = token
    return out


@endpoint("POST")
async def conversation_create(request, key, agent_id: str):
    return _json(await sync_to_async(_create)(request, key, agent_id), status=201)


@endpoint("GET", "DELETE")
async def conversation_detail(request, key, conversation_id: str):
    """GET: the conversation with its turns. DELETE (project keys): the conversation and what it
    stored (`services.conversation_delete`), answering its receipt."""

    def read():
        conversation = _conversation(request, key, conversation_id)
        return selectors.conversation_json(conversation=conversation, turns=True, public=_public(key))

    def delete():
        if _public(key):
            raise Unauthorized(
                "Deleting a conversation takes a project key.",
                hint="Delete end users' conversations from your server with a project key.",
            )
        conversation = _conversation(request, key, conversation_id)
        return {"deleted": services.conversation_delete(conversation=conversation)}

    if request.method == "DELETE":
        return _json(await sync_to_async(delete)())
    return _json(await sync_to_async(read)())


@endpoint("POST")
async def conversation_say(request, key, conversation_id: str):
    """{"input": str} → the turn snapshot, or SSE with Accept: text/event-stream."""
    request_id = getattr(request, "request_id", "")
    public = _public(key)

    admit = limits.admit_end_user_turn if public else None

    def prepare():
        conversation = _conversation(request, key, conversation_id)
        data = json_object_body(request.body, {"input"})
        text = services.check_input(data.get("input"))
        return conversation, limits.check_input(text) if public else text

    conversation, text = await sync_to_async(prepare)()
    if _wants_sse(request):
        handle, slot = await services.turn_begin_streamed(
            runner.turn_begin, conversation=conversation, text=text, admit=admit
        )
        return sse_response(
            services.turn_stream(handle=handle, request_id=request_id, slot=slot), public=public
        )
    snapshot = await sync_to_async(services.turn_say)(
        conversation=conversation, text=text, request_id=request_id, admit=admit
    )
    return _json(selectors.public_snapshot(snapshot) if public else snapshot)


@endpoint("POST")
async def conversation_rerun(request, key, conversation_id: str):
    request_id = getattr(request, "request_id", "")
    public = _public(key)

    def prepare():
        conversation = _conversation(request, key, conversation_id)
        json_object_body(request.body, set())
        return conversation

    conversation = await sync_to_async(prepare)()
    admit = limits.admit_end_user_turn if public else None
    if _wants_sse(request):
        handle, slot = await services.turn_begin_streamed(
            runner.turn_begin_rerun, conversation=conversation, admit=admit
        )
        return sse_response(
            services.turn_stream(handle=handle, request_id=request_id, slot=slot), public=public
        )
    snapshot = await sync_to_async(services.turn_rerun)(
        conversation=conversation, request_id=request_id, admit=admit
    )
    return _json(selectors.public_snapshot(snapshot) if public else snapshot)


POLL_SECONDS = 0.2


async def _replay(conversation: Conversation, number: int, last_id: int | None):
    """Recorded events from the start of the current attempt (or after Last-Event-ID), then live
    (polling the table, so it works across processes) until that attempt's `done`."""
    after = last_id
    quiet = 0
    while True:
        turn = await sync_to_async(selectors.turn_get)(conversation=conversation, number=number)
        rows = await sync_to_async(selectors.turn_events)(
            conversation=conversation, turn=number, after=after, attempt=turn.attempt
        )
        for row in rows:
            after = row["id"]
            yield row
            if row["event"] == "done" and row["attempt"] == turn.attempt:
                return
        if after is not None:
            finished = await sync_to_async(
                TurnEvent.objects.filter(
                    conversation=conversation, turn=number, attempt=turn.attempt, name="done", seq__lte=after
                ).exists
            )()
            if finished:
                return
        if not rows and selectors.turn_state(turn) != Turn.State.IN_PROGRESS:
            quiet += 1
            if quiet > 5:  # ended without a done event (its process died): nothing more will come
                return
        else:
            quiet = 0
        await asyncio.sleep(POLL_SECONDS)


@endpoint("GET", query_key=True)
async def turn_events(request, key, conversation_id: str, number: int):
    raw = request.headers.get("Last-Event-ID") or request.GET.get("last_event_id")
    try:
        last_id = int(raw) if raw else None
    except ValueError:
        raise InvalidRequest("Last-Event-ID: must be an event id (an integer) this route sent.") from None

    def read():
        conversation = _conversation(request, key, conversation_id)
        selectors.turn_get(conversation=conversation, number=number)
        return conversation

    conversation = await sync_to_async(read)()
    return sse_response(_replay(conversation, number, last_id), public=_public(key))
