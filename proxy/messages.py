"""Anthropic Messages on the proxy: the server-side threads of the Messages API (SPEC 4.8).

anthropic ≥ 2.17's `tool_runner` keeps the conversation on the server by default: its first request
carries `"thread": {"type": "create"}` with the whole history, each later one `{"type": "continue",
"previous_message_id": "msg_…"}` with only the new messages and without `system` and `tools` (the
server keeps the ones the thread was created with). Through the proxy, the memory is that server:

* a call with memory never forwards `thread`: the upstream gets the history once, as decorate
  builds it. A create's `system` and `tools` are held for the memory's thread (MessagesThread)
  and go upstream again with each continuation that leaves them out;
* when the request carried `thread`, the answer's message id is issued by this proxy (`msg_tl…`,
  proxy.ids): a continuation of it names its memory and thread, whatever the headers say;
* a continuation of an id this proxy did not issue is a 400 in Anthropic's shape with
  `error.details.error_code` `thread_not_found`, on which Anthropic's clients send the whole
  conversation again under a new thread. A call that names no memory at all is only forwarded,
  `thread` included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from common.errors import InvalidRequest, NotFound
from memories.selectors import memory_get
from proxy.ids import issued_id, issued_target
from proxy.models import MessagesThread
from proxy.protocols import Protocol, Reference, anthropic_body, frame_with_object_rewritten

CREATE_ONLY = ("system", "tools")  # what a continuation leaves out: the thread's own


class ThreadNotFound(InvalidRequest):
    code = "thread_not_found"  # Anthropic's error_code: its clients replay the whole conversation
    hint = 'Send the whole conversation with thread {"type": "create"}; Anthropic\'s clients do so.'


def _thread(body: dict) -> dict | None:
    thread = body.get("thread")
    return thread if isinstance(thread, dict) else None


def held_fields(*, memory, thread: str | None) -> dict:
    row = MessagesThread.objects.filter(memory=memory, thread=thread or "").values_list("fields", flat=True)
    return next(iter(row), None) or {}


def messages_thread_deleted(sender, *, memory_id: str, thread: str, **kwargs) -> None:
    """`memories.signals.thread_deleted`: the fields held for a deleted thread go with it."""
    names = [thread, ""] if thread == "default" else [thread]
    MessagesThread.objects.filter(memory_id=memory_id, thread__in=names).delete()


@dataclass(frozen=True)
class MessagesProtocol(Protocol):
    """Anthropic Messages with its server-side threads held by the memory."""

    def upstream_body(self, body: dict, *, instructions: str, messages: list[dict]) -> dict:
        upstream = anthropic_body(body, instructions=instructions, messages=messages)
        upstream.pop("thread", None)
        return upstream

    def referenced(self, *, project, body: dict, memory_named: bool) -> Reference | None:
        """The memory and thread of a continuation's `previous_message_id`, with the fields its
        thread was created with."""
        thread = _thread(body)
        if thread is None or thread.get("type") != "continue":
            return None
        previous = thread.get("previous_message_id")
        target = issued_target("msg", previous)
        unknown = ThreadNotFound(
            f"thread.previous_message_id: '{str(previous)[:80]}' was not issued by this Threadless proxy."
        )
        if target is None:
            if not memory_named:
                return None  # nothing names a memory: only forwarded, as the client sent it
            raise unknown
        try:
            memory = memory_get(project=project, memory_id=target.memory_id)
        except NotFound:
            raise unknown from None
        return Reference(memory, target.thread, held_fields(memory=memory, thread=target.thread))

    def hold(self, *, memory, thread: str | None, body: dict) -> None:
        created = _thread(body)
        if created is not None and created.get("type") == "create":
            MessagesThread.objects.update_or_create(
                memory=memory,
                thread=thread or "",
                defaults={"fields": {k: body[k] for k in CREATE_ONLY if k in body}},
            )

    def issues_ids(self, body: dict) -> bool:
        return _thread(body) is not None

    def answer_json(self, raw: bytes, call) -> bytes:
        """The message with its id issued by this proxy (a call that carried `thread`)."""
        if not _issuing(call):
            return raw
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return raw
        return orjson.dumps(_rewrite(data, call)) if isinstance(data, dict) else raw

    def answer_frame(self, frame: bytes, call) -> bytes:
        """`message_start`, whose message carries the id, with the id issued by this proxy."""
        if b"message_start" not in frame or not _issuing(call):
            return frame
        return frame_with_object_rewritten(frame, "message", lambda message: _rewrite(message, call))


def _issuing(call) -> bool:
    return call.issues_ids and call.memory is not None and not call.degraded


def _rewrite(message: dict[str, Any], call) -> dict:
    if not isinstance(message.get("id"), str):
        return message
    return {**message, "id": issued_id("msg", call.memory.id, message["id"], call.turn, call.thread)}


MESSAGES = MessagesProtocol("anthropic", "https://api.anthropic.com", "/v1/messages", "api.anthropic.com")
