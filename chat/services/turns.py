"""Conversations and their turns, for the API and the consoles.

`turn_say` / `turn_rerun` run a turn to its end; the `…_stream` forms and `turn_begin_streamed`
+ `turn_stream` run it on the bounded stream pool (`chat.turnpool`), so a consumer that stops
listening cancels nothing (the turn completes and is stored). Events are {"id", "event", "data"}.
`admit` is `chat.limits.admit_end_user_turn` for publishable-key callers (see runner.turn_begin).
Snapshots are project-key views; pass them through selectors.public_snapshot / public_event for
a publishable-key caller.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator

from asgiref.sync import sync_to_async
from django.db import connection, transaction

from chat import runner, turnpool
from chat.config import policy_of
from chat.models import Agent, Conversation
from chat.selectors import client_token_hash
from common.errors import InvalidRequest
from memories.selectors import thread_view
from memories.services import (
    external_id_check,
    memory_create,
    memory_delete,
    memory_lock,
    thread_delete,
)

log = logging.getLogger("threadless.chat")


def conversation_create(
    *,
    agent: Agent,
    metadata: dict | None = None,
    with_client_token: bool = False,
    external_id: str | None = None,
) -> tuple[Conversation, str | None]:
    """A conversation = the agent + a fresh memory carrying the agent's policy, or, with
    `external_id` (project keys only: the caller says whose conversation it is), a new thread of
    that subject's memory (created on first use, like the external-id routes), named after the
    conversation: the subject's facts and recall span its conversations, each window is its own.

    With `with_client_token` (publishable-key callers) a client token is returned once; only its
    hash is kept, and every later publishable-key call must present it. A client token and an
    `external_id` never go together: an end user cannot choose a subject.
    """
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidRequest("metadata: must be an object.")
    if external_id is not None:
        if with_client_token:
            raise InvalidRequest(
                "external_id: an end user's conversation has a memory of its own; "
                "only a project key chooses a subject."
            )
        external_id_check(external_id)
    token = secrets.token_urlsafe(24) if with_client_token else None
    with transaction.atomic():
        if external_id is None:
            memory, _ = memory_create(
                project=agent.project,
                metadata={**(metadata or {}), "agent": agent.id},
                policy=policy_of(agent.config).as_json(),
            )
        else:
            memory, _ = memory_create(
                project=agent.project, external_id=external_id, policy=policy_of(agent.config).as_json()
            )
        conversation = Conversation(
            project=agent.project,
            agent=agent,
            memory=memory,
            metadata=metadata or {},
            client_token_hash=client_token_hash(token) if token else "",
        )
        if external_id is not None:
            conversation.thread = conversation.id
        conversation.save(force_insert=True)
    return conversation, token


def conversation_delete(*, conversation: Conversation) -> dict:
    """Delete a conversation and what it stored; returns the receipt (counts of the rows removed).

    A memory of its own goes whole (as with its agent). A thread of a subject's memory goes as
    `thread_delete` says (its entries, turns, digests, index rows, summary, and the facts learned
    only in it): the subject's other conversations and what they taught stay.
    """
    if conversation.owns_memory:
        return {"conversations": 1, **memory_delete(memory=conversation.memory)}
    with transaction.atomic():
        memory = memory_lock(conversation.memory)
        # A conversation that never said anything has no thread row yet: nothing of it is stored.
        used = thread_view(memory=memory, name=conversation.thread).pk is not None
        receipt = thread_delete(memory=memory, name=conversation.thread) if used else {"threads": 0}
        Conversation.objects.filter(pk=conversation.pk).delete()  # `thread_deleted` may have done it
    return {"conversations": 1, **receipt}


def conversation_thread_deleted(sender, *, memory_id: str, thread: str, **kwargs) -> None:
    """`memories.signals.thread_deleted`: a conversation whose thread is deleted goes with it (its
    turns are gone; its recorded events would otherwise meet the thread's next turn 1)."""
    Conversation.objects.filter(memory_id=memory_id, thread=thread).delete()


def turn_say(
    *, conversation: Conversation, text: str, request_id: str = "", admit: runner.Admit | None = None
) -> dict:
    """Say something and run the turn to its end (not streamed). Returns the turn snapshot."""
    text = check_input(text)
    handle = runner.turn_begin(conversation=conversation, text=text, admit=admit)
    return runner.turn_execute(handle=handle, stream=False, request_id=request_id, conversation=conversation)


def turn_rerun(
    *, conversation: Conversation, request_id: str = "", admit: runner.Admit | None = None
) -> dict:
    handle = runner.turn_begin_rerun(conversation=conversation, admit=admit)
    return runner.turn_execute(handle=handle, stream=False, request_id=request_id, conversation=conversation)


def check_input(text) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidRequest("input: must be a non-empty string.")
    if len(text) > 100_000:
        raise InvalidRequest("input: at most 100,000 characters.")
    return text


async def turn_begin_streamed(begin, **kwargs) -> tuple[runner.TurnHandle, turnpool.Slot]:
    """Reserve a stream worker (503 when the pool is full), then `begin(**kwargs)` (a
    `runner.turn_begin…`); the slot goes back when the begin fails. Pass both to `turn_stream`."""
    slot = turnpool.reserve()
    try:
        handle = await sync_to_async(begin)(**kwargs)
    except BaseException:
        slot.release()
        raise
    return handle, slot


def turn_stream(
    *, handle: runner.TurnHandle, request_id: str = "", slot: turnpool.Slot | None = None
) -> AsyncIterator[dict]:
    """Run a begun turn (streamed) on the bounded pool and yield its events as they happen.

    Call it from async code (it needs the running loop). The work is submitted at once, not at
    the first iteration, so a response that is never read still runs and stores its turn; a
    client that goes away, or a shutting-down server, still lets the turn reach its end (at the
    latest, its next task boundary). Without a `slot` (see `turn_begin_streamed`) the turn
    takes one regardless and may wait in the pool's queue.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()

    def put(item) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the loop is gone (client left and the server stopped): keep running
            pass

    def work() -> None:
        try:
            runner.turn_execute(handle=handle, stream=True, listener=put, request_id=request_id)
        except runner.TurnCrashed:
            pass
        except Exception:  # noqa: BLE001 - logged; the stream ends with an error event
            log.exception("streamed turn failed")
            put(
                {
                    "id": 0,
                    "event": "error",
                    "data": {"message": "Something went wrong on our side.", "requestId": request_id},
                }
            )
        finally:
            connection.close()
            held.release()  # before the stream ends: a client that saw the end finds the slot free
            put(None)

    held = slot or turnpool.reserve(refuse=False)
    held.run(work)
    return _drain(queue)


async def _drain(queue: asyncio.Queue) -> AsyncIterator[dict]:
    while True:
        event = await queue.get()
        if event is None:
            return
        yield event


async def turn_say_stream(
    *, conversation: Conversation, text: str, request_id: str = "", admit: runner.Admit | None = None
) -> AsyncIterator[dict]:
    """Streaming say for pages: raises Conflict/InvalidRequest/Unavailable on the first iteration."""
    text = check_input(text)
    handle, slot = await turn_begin_streamed(
        runner.turn_begin, conversation=conversation, text=text, admit=admit
    )
    async for event in turn_stream(handle=handle, request_id=request_id, slot=slot):
        yield event


async def turn_rerun_stream(
    *, conversation: Conversation, request_id: str = "", admit: runner.Admit | None = None
) -> AsyncIterator[dict]:
    handle, slot = await turn_begin_streamed(runner.turn_begin_rerun, conversation=conversation, admit=admit)
    async for event in turn_stream(handle=handle, request_id=request_id, slot=slot):
        yield event
