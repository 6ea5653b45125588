"""`POST /v1/openai/chat/completions`, `POST /v1/openai/responses` and `POST /v1/anthropic/v1/messages`
(SPEC 4.8).

Per call: authenticate (the Threadless key), decorate the request's new messages into the named
memory, forward the decorated request upstream (the egress-pinned transport, proxy.upstream), stream the
reply back as it arrives, then report it durably (before the client sees the stream's last
event, so a client that reads the memory right after the call finds the reply). A client
disconnect mid-stream stores the part received so far once, ending with the `[cut off: …]`
marker line, closes the upstream stream and re-raises. Memory never fails the model call: when
decorate cannot run (database down) the call is forwarded as sent, with `X-Threadless-Degraded: 1`.
An upstream the egress policy refuses is answered 502 before anything is stored.

Threadless's own errors (key, body, settings) answer in the SPEC 4.1 shape; upstream errors come
back in the provider's own shape and status, so the client's retry logic works unchanged.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import httpx
import orjson
from asgiref.sync import sync_to_async
from django.http import HttpResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from common import metrics
from common.errors import ApiError, Unauthorized, exception_response
from common.http.bearer import bearer_token
from common.http.body import json_object, parse_json
from common.redaction import provider_message
from projects.auth import key_from_plaintext
from projects.models import ApiKey
from projects.ratelimit import check_quota, check_rate
from providers.bounded import SSEFramer, UpstreamUnreadable, aiter_body, aread_body, sse_parse, stream_cap
from providers.egress import EgressRefused, egress_check_recent
from proxy import services
from proxy.messages import MESSAGES
from proxy.protocols import CUT_OFF_CLIENT, CUT_OFF_UPSTREAM, OPENAI, Protocol, cut_off
from proxy.responses import RESPONSES
from proxy.upstream import ProjectSlot, project_slot_take, upstream_request, upstream_send

log = logging.getLogger("threadless.proxy")

# Request headers forwarded upstream (the provider's own); everything else stays here.
FORWARD_PREFIXES = ("anthropic-", "openai-", "x-stainless-")
# Upstream answer headers passed back (limits and retry hints the client's SDK acts on).
BACK_PREFIXES = ("x-ratelimit-", "anthropic-ratelimit-", "openai-", "retry-after", "x-should-retry")
BACK_RENAMED = {"x-request-id": "X-Upstream-Request-Id", "request-id": "X-Upstream-Request-Id"}


RETRY_AFTER_SECONDS = "1"  # a busy answer's Retry-After: the SDKs wait this long and try again


class MethodNotAllowed(ApiError):
    status = 405
    code = "method_not_allowed"
    hint = "This route takes POST, as the provider's API does."


class ProjectBusy(Exception):
    """The project already has as many proxy calls open as it may (answered 503 in the provider's shape)."""


class RelayResponse(StreamingHttpResponse):
    """A relayed stream that runs `on_close` when Django closes the response, which it does even
    when the stream never began (a client gone before the first frame)."""

    def __init__(self, *args, on_close, **kwargs):
        super().__init__(*args, **kwargs)
        self._on_close = on_close

    def close(self) -> None:
        try:
            self._on_close()
        finally:
            super().close()


# Runs a sync function (the database work before and after the upstream call) off the event loop:
# `await offload(function, *args)`. Django's handler uses asgiref's sync_to_async; the serving layer's
# route for these views (serving.proxyroutes) passes its view threads.
Offload = Callable[..., Awaitable]


async def _sync_to_async(function, *args):
    return await sync_to_async(function)(*args)


@dataclass
class Call:
    protocol: Protocol
    project: object
    memory: object | None
    upstream: services.Upstream
    body: dict  # what goes upstream
    stream: bool
    slot: ProjectSlot  # released when the answer is sent or the stream ends, however it ends
    turn: int | None = None
    degraded: bool = False
    thread: str | None = None  # the memory's thread (None: its default one)
    conversation: str | None = None  # the Responses route's `conversation`, answered back
    issues_ids: bool = False  # the answer's ids are rewritten into ids naming memory and thread
    offload: Offload = field(default=_sync_to_async, repr=False)  # how the report runs off the loop

    def headers(self) -> dict:
        out = {"X-Threadless-Memory": self.memory.id if self.memory is not None else "none"}
        if self.turn is not None:
            out["X-Threadless-Turn"] = str(self.turn)
        if self.degraded:
            out["X-Threadless-Degraded"] = "1"
        return out


# --- before the upstream call (sync, in one thread hop) ------------------------------------------


def _authenticate(request, protocol: Protocol) -> ApiKey:
    """The same key check and limits as every /v1 route (projects.auth, projects.ratelimit); the
    Anthropic clients send their key as x-api-key instead of a Bearer header."""
    token = bearer_token(request.headers.get("Authorization", ""))
    if token is None and protocol.name == "anthropic":
        token = request.headers.get("x-api-key", "").strip()
    if not token:
        raise Unauthorized(
            "No Threadless key was sent.",
            hint="Pass your tl_proj_… key as the client's api_key; "
            "the provider key goes in X-Upstream-Authorization or the project's proxy settings.",
        )
    key = key_from_plaintext(token)
    if key.kind != ApiKey.Kind.PROJECT:
        raise Unauthorized(
            "A publishable key can only use the end-user chat routes.",
            hint="Use a project key (tl_proj_…) on the proxy.",
        )
    request.api_key = key
    check_rate(request, key)
    check_quota(request, key)
    return key


def _body(request) -> dict:
    """The provider's request body: parsed like every /v1 body (common.http.body); unknown fields
    are the provider's business, so none is refused here."""
    return json_object(parse_json(request.body))


def _is_retry(request) -> bool:
    """The OpenAI and Anthropic SDKs (Python and TypeScript) number their retries."""
    count = request.headers.get("x-stainless-retry-count", "0").strip()
    return count.isdigit() and int(count) > 0


def _prepare(request, protocol: Protocol) -> Call:
    """Authenticate, take one of the project's call slots (before anything is stored), decorate."""
    key = _authenticate(request, protocol)
    slot = project_slot_take(key.project_id)
    if slot is None:
        raise ProjectBusy("This project has as many proxy calls open as it may; retry when one has finished.")
    try:
        return _prepare_call(request, protocol, key, slot)
    except BaseException:
        slot.release()
        raise


def _prepare_call(request, protocol: Protocol, key: ApiKey, slot: ProjectSlot) -> Call:
    project = key.project
    sent = _body(request)
    body = protocol.forwardable(sent)
    upstream = services.upstream_resolve(
        project=project,
        protocol=protocol,
        base_url=request.headers.get("X-Upstream-Base-Url"),
        authorization=request.headers.get("X-Upstream-Authorization"),
    )
    egress_check_recent(upstream.url)  # a call the policy refuses stores nothing (no failed turn)
    budget = services.budget_of(request.headers.get("X-Threadless-Budget"))
    named = request.headers.get("X-Threadless-Memory", "").strip()
    named = named if named.lower() != "none" else ""
    external = request.headers.get("X-Threadless-External-Id")
    call = Call(
        protocol=protocol,
        project=project,
        memory=None,
        upstream=upstream,
        body=body,
        stream=body.get("stream") is True,
        slot=slot,
        thread=services.thread_of(request.headers.get("X-Threadless-Thread")),
        conversation=protocol.conversation_of(sent),
        issues_ids=protocol.issues_ids(sent),
    )
    try:
        memory_named = bool(named or (external and external.strip()) or protocol.user_of(body))
        reference = protocol.referenced(project=project, body=sent, memory_named=memory_named)
        if reference is not None:  # the body's own reference wins over the headers
            call.memory, call.thread = reference.memory, reference.thread
            body = call.body = {**reference.restored, **body}
        else:
            call.memory = services.proxy_memory(
                project=project, memory_id=named or None, external_id=external, user=protocol.user_of(body)
            )
        if call.memory is None:
            return call
        protocol.hold(memory=call.memory, thread=call.thread, body=sent)
        answer = services.proxy_decorate(
            memory=call.memory,
            project=project,
            protocol=protocol,
            body=body,
            budget_tokens=budget,
            retry=_is_retry(request),
            thread=call.thread,
        )
    except ApiError as exc:
        if exc.status < 500:
            raise  # the caller's mistake (an unknown memory id, a bad budget): say so
        return _degraded(call, exc)
    except Exception as exc:  # noqa: BLE001 - memory never fails the model call
        return _degraded(call, exc)
    call.turn = answer["turn"]
    call.body = protocol.upstream_body(body, instructions=answer["instructions"], messages=answer["messages"])
    return call


def _degraded(call: Call, exc: Exception) -> Call:
    metrics.decorate_degraded("proxy")
    log.warning("proxy: decorate failed (%s); forwarding without memory", exc.__class__.__name__)
    call.degraded = True  # forwarded as the client sent it; nothing is reported (nothing was stored)
    return call


# --- after ------------------------------------------------------------------------------------


def _report_sync(call: Call, reply: dict | None, error: str | None) -> None:
    if call.memory is None or call.degraded:
        return
    try:
        services.proxy_report(
            memory=call.memory, protocol=call.protocol, reply=reply, error=error, thread=call.thread
        )
    except Exception as exc:  # noqa: BLE001 - the client has its answer; the failure goes to the log
        log.error("proxy: report for %s failed: %s", call.memory.id, exc.__class__.__name__, exc_info=exc)


async def _report(call: Call, reply: dict | None, error: str | None) -> None:
    """Report, shielded: a client disconnect while it runs does not stop the write."""
    if call.memory is None or call.degraded:
        return
    await asyncio.shield(asyncio.ensure_future(call.offload(_report_sync, call, reply, error)))


def _back_headers(response: httpx.Response) -> dict:
    out = {}
    for name, value in response.headers.items():
        lowered = name.lower()
        if lowered in BACK_RENAMED:
            out[BACK_RENAMED[lowered]] = value
        elif lowered.startswith(BACK_PREFIXES):
            out[name] = value
    return out


def _respond(content: bytes, *, status: int, content_type: str, headers: dict) -> HttpResponse:
    response = HttpResponse(content, status=status, content_type=content_type)
    response["X-Content-Type-Options"] = "nosniff"
    for name, value in headers.items():
        response[name] = value
    return response


def _transport_failure(exc: Exception) -> tuple[int, str]:
    if isinstance(exc, httpx.PoolTimeout):
        return 503, "every upstream connection of this server is in use"
    if isinstance(exc, UpstreamUnreadable):
        return 502, str(exc)
    if isinstance(exc, httpx.TimeoutException):
        return 504, "the upstream timed out"
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, EgressRefused):
            # the caller gets the same text whatever the reason; why goes to the staff log
            log.warning("proxy: upstream refused by the egress policy: %s", cause.detail)
            return 502, str(cause)
        if isinstance(cause, ConnectionRefusedError) or "refused" in str(cause).lower():
            return 502, "connection refused"
        cause = cause.__cause__ or cause.__context__
    return 502, f"connection failed ({exc.__class__.__name__})"


def _failure(call: Call, message: str, *, status: int, headers: dict) -> HttpResponse:
    """A failure Threadless answers for the upstream, in the provider's error shape; a 503 says
    when to try again."""
    if status == 503:
        headers = {**headers, "Retry-After": RETRY_AFTER_SECONDS}
    return _respond(
        orjson.dumps(call.protocol.error_body(message, status=status)),
        status=status,
        content_type="application/json",
        headers=headers,
    )


def _busy(protocol: Protocol, exc: ProjectBusy) -> HttpResponse:
    return _respond(
        orjson.dumps(protocol.error_body(str(exc), status=503)),
        status=503,
        content_type="application/json",
        headers={"Retry-After": RETRY_AFTER_SECONDS},
    )


def _egress_refused(protocol: Protocol, exc: EgressRefused, *, added: float) -> HttpResponse:
    """The upstream the egress policy refuses, known before decorate: a 502 like an unreachable
    upstream, whose text names the allow-list value; why (the address) goes to the staff log only."""
    log.warning("proxy: upstream refused by the egress policy: %s", exc.detail)
    metrics.proxy_call(protocol.name, "unreachable", added)
    return _respond(
        orjson.dumps(protocol.error_body(f"Threadless could not reach the upstream: {exc}", status=502)),
        status=502,
        content_type="application/json",
        headers={},
    )


def _error(request, exc: Exception, call: Call | None = None) -> HttpResponse:
    response = exception_response(request, exc)
    for name, value in (call.headers() if call else {}).items():
        response[name] = value
    return response


# --- the call ---------------------------------------------------------------------------------


async def _prepared(offload: Offload, request, protocol: Protocol) -> Call:
    """`_prepare` off the loop. Cancelled meanwhile (the client went away), the thread still
    finishes; the slot its call took is then released as soon as it has."""
    prepared = asyncio.ensure_future(offload(_prepare, request, protocol))  # a future as it is, else a task
    try:
        call = await asyncio.shield(prepared)
    except asyncio.CancelledError:
        prepared.add_done_callback(_release_orphan)
        raise
    call.offload = offload
    return call


def _release_orphan(prepared: asyncio.Future) -> None:
    if not prepared.cancelled() and prepared.exception() is None:
        prepared.result().slot.release()


async def proxy_call(request, protocol: Protocol, *, offload: Offload = _sync_to_async) -> HttpResponse:
    """One call of a provider route (`request`: Django's request, or serving.proxyroutes' own with
    the same attributes); `offload` runs the database work before and after the upstream call."""
    started = time.perf_counter()
    try:
        if request.method != "POST":
            raise MethodNotAllowed(f"Method {request.method} is not allowed on this path.")
        call = await _prepared(offload, request, protocol)
    except ProjectBusy as exc:
        return _busy(protocol, exc)
    except EgressRefused as exc:
        return _egress_refused(protocol, exc, added=time.perf_counter() - started)
    except Exception as exc:  # noqa: BLE001 - Threadless's own errors in the one error shape
        return _error(request, exc)
    try:
        answer = await _forward(request, call, added=time.perf_counter() - started)
    except BaseException:
        call.slot.release()
        raise
    if not answer.streaming:
        call.slot.release()
    return answer


async def _forward(request, call: Call, *, added: float) -> HttpResponse:
    """Send the call upstream and answer with what comes back (`added`: the seconds Threadless spent
    before it); a streamed answer releases the call's slot when its stream ends or the response is closed."""
    forwarded = {k: v for k, v in request.headers.items() if k.lower().startswith(FORWARD_PREFIXES)}
    operation = "Streaming chat" if call.stream else "Chat model execution"
    try:
        sent = upstream_request(
            call.upstream.url,
            content=orjson.dumps(call.body),
            headers={
                **forwarded,
                **call.upstream.headers,
                "Content-Type": "application/json",
                "Accept": "text/event-stream" if call.stream else "application/json",
            },
        )
        response = await upstream_send(sent)
    except Exception as exc:  # noqa: BLE001 - unreachable upstream: the provider's error shape, recorded
        status, reason = _transport_failure(exc)
        metrics.proxy_call(call.protocol.name, "unreachable", added)
        await _report(call, None, f"{operation} failed: {reason}")
        return _failure(
            call, f"Threadless could not reach the upstream: {reason}", status=status, headers=call.headers()
        )
    metrics.proxy_call(call.protocol.name, response.status_code, added)
    headers = {**_back_headers(response), **call.headers()}
    content_type = response.headers.get("content-type", "application/json")
    if response.status_code >= 400 or not (call.stream and content_type.startswith("text/event-stream")):
        try:
            raw = await aread_body(response)  # decoded bytes within THREADLESS_UPSTREAM_MAX_BYTES
        except Exception as exc:  # noqa: BLE001
            status, reason = _transport_failure(exc)
            await _report(call, None, f"{operation} failed: {reason}")
            said = (
                "Threadless stopped reading the upstream answer"
                if isinstance(exc, UpstreamUnreadable)
                else "The upstream answer broke off"
            )
            return _failure(call, f"{said}: {reason}", status=status, headers=headers)
        finally:
            await response.aclose()
        if response.status_code >= 400:
            message = provider_message(raw) or f"HTTP {response.status_code}"
            await _report(call, None, f"{operation} failed: {message} (HTTP {response.status_code})")
            if not content_type.startswith("application/json"):  # keep the provider's shape even so
                raw, content_type = (
                    orjson.dumps(call.protocol.error_body(message, status=response.status_code)),
                    "application/json",
                )
            return _respond(raw, status=response.status_code, content_type=content_type, headers=headers)
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            data = None
        if not isinstance(data, dict):
            # Only JSON is served from this origin: an HTML (or any other) page an upstream answers
            # would otherwise render as ours.
            kind = content_type.split(";")[0].strip()[:100] or "no content type"
            message = f"the upstream answered {kind}, not a JSON object"
            await _report(call, None, f"{operation} failed: {message}")
            body = call.protocol.error_body(
                f"Threadless could not use the upstream answer: {message}", status=502
            )
            return _respond(orjson.dumps(body), status=502, content_type="application/json", headers=headers)
        await _report(call, call.protocol.reply(data), None)
        raw = call.protocol.answer_json(raw, call)
        return _respond(raw, status=response.status_code, content_type="application/json", headers=headers)
    streaming = RelayResponse(
        relay(call, response),
        on_close=call.slot.release,
        status=response.status_code,
        content_type="text/event-stream",
    )
    for name, value in {**headers, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}.items():
        streaming[name] = value
    return streaming


async def relay(call: Call, response: httpx.Response):
    """Forward the upstream's SSE frames as they arrive and accumulate the reply.

    Frames are split as bytes arrive, each byte scanned once, within the stream's and a frame's
    caps (providers.bounded); past a cap, or at an event that cannot be read, the stream ends with
    an error event and the turn keeps the part received (cut off) and the failure, like a broken
    upstream. The frames of one read are passed on together, in one write (one ASGI message
    instead of one per frame: a Responses stream has many small events). The reply is reported
    before the frame that ends it is sent (`data: [DONE]`, `message_stop`, `response.completed`,
    or the provider's error event, after which the part received is kept cut off): a client that
    stops at that frame finds the turn stored; a call with no memory reports nothing, so its
    frames are not parsed at all. On a client disconnect (CancelledError)
    the part received so far is reported once, marked cut off; the upstream stream is closed and
    the call's slot released in every case.
    """
    acc = call.protocol.stream()
    reported = False
    framer = SSEFramer()
    out: list[bytes] = []  # the frames of the current read, not yet passed on
    tracked = call.memory is not None and not call.degraded
    try:
        try:
            async for piece in aiter_body(response, limit=stream_cap(), what="stream"):
                for raw_frame in framer.feed(piece):
                    if not tracked:  # nothing to report or rewrite: the frames pass as they came
                        out.append(raw_frame + b"\n\n")
                        continue
                    event, data = sse_parse(raw_frame.decode("utf-8", "replace"))
                    if data:
                        acc.feed(event, data)
                    if not reported and (acc.done or acc.error):
                        reported = True
                        error = f"Streaming chat failed: {acc.error}" if acc.error else None
                        said = acc.message() if acc.done else cut_off(acc.message(), CUT_OFF_UPSTREAM)
                        await _report(call, said, error)
                    out.append(call.protocol.answer_frame(raw_frame, call) + b"\n\n")
                if out:
                    sent, out = b"".join(out), []
                    yield sent
        except Exception as exc:  # noqa: BLE001 - any failure ends the stream with an error event and a failed turn
            if isinstance(exc, (httpx.HTTPError, UpstreamUnreadable)):
                reason = _transport_failure(exc)[1]
            else:
                log.exception("proxy: an upstream stream event could not be read")
                reason = "an upstream event could not be read"
            if not reported:
                reported = True
                await _report(
                    call, cut_off(acc.message(), CUT_OFF_UPSTREAM), f"Streaming chat failed: {reason}"
                )
            said = (
                "The upstream stream broke off"
                if isinstance(exc, httpx.HTTPError)
                else "Threadless stopped reading the upstream stream"
            )
            body = call.protocol.error_body(f"{said}: {reason}", status=502)
            yield (
                b"".join(out)
                + (b"event: error\n" if call.protocol is not OPENAI else b"")
                + b"data: "
                + orjson.dumps(body)
                + b"\n\n"
            )
            return
        rest = framer.rest()
        if rest.strip():
            yield rest + b"\n\n"
        if not reported:
            reported = True
            reason = acc.error or "the upstream stream ended before its last event"
            await _report(call, cut_off(acc.message(), CUT_OFF_UPSTREAM), f"Streaming chat failed: {reason}")
    except asyncio.CancelledError:
        if not reported:
            reported = True
            await _report(call, cut_off(acc.message(), CUT_OFF_CLIENT), None)
        raise
    finally:
        call.slot.release()
        await response.aclose()


@csrf_exempt
async def openai_chat_completions(request):
    """OpenAI Chat Completions, with memory: `OpenAI(base_url="<origin>/v1/openai")`."""
    return await proxy_call(request, OPENAI)


@csrf_exempt
async def anthropic_messages(request):
    """Anthropic Messages, with memory: `Anthropic(base_url="<origin>/v1/anthropic")`."""
    return await proxy_call(request, MESSAGES)


@csrf_exempt
async def openai_responses(request):
    """OpenAI Responses, with memory: `OpenAI(base_url="<origin>/v1/openai").responses.create(…)`."""
    return await proxy_call(request, RESPONSES)
