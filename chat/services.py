"""Writes for agents, conversations, turns and the secret store — what the API and consoles call.

Agents
    agent_create(*, project, name, config, slug=None) -> Agent        (400 names the JSON path)
    agent_update(*, agent, name=…, config=…, slug=…) -> Agent
    agent_delete(*, agent) -> dict                                     (its conversations' memories too)
    agent_ensure_demo(*, project, demo: dict) -> dict                  (for bootstrap_demo)
Conversations and turns
    conversation_create(*, agent, metadata=None, with_client_token=False) -> (Conversation, token|None)
    turn_say(*, conversation, text, request_id="", admit=None) -> dict  (sync; the turn snapshot)
    turn_rerun(*, conversation, request_id="", admit=None) -> dict      (sync; 409 when nothing to retry)
    turn_say_stream / turn_rerun_stream(*, conversation, …) -> AsyncIterator[event dict]
        events are {"id", "event", "data"}; the turn runs on the bounded stream pool
        (`chat.turnpool`), so a consumer that stops listening cancels nothing (the turn
        completes and is stored).
    turn_begin_streamed(begin, **kwargs) -> (handle, slot)              (503 when the pool is full)
    turn_stream(*, handle, request_id="", slot=None) -> AsyncIterator   (after turn_begin_streamed)
    `admit` is `chat.limits.admit_end_user_turn` for publishable-key callers (see runner.turn_begin).
Secret store (projects.secretbox: MultiFernet over THREADLESS_SECRET_STORE_KEYS; rotate_secrets)
    secret_set(*, project, name, value) / secret_delete(*, project, name) / selectors.secret_list
    provider_api_key(*, project_id, task) -> str | None
Snapshots are project-key views; pass them through selectors.public_snapshot / public_event for
a publishable-key caller.
"""

from __future__ import annotations

import asyncio
import logging
import re
import secrets
from collections.abc import AsyncIterator

from asgiref.sync import sync_to_async
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.text import slugify

from chat import runner, turnpool
from chat.config import config_validate, policy_of
from chat.models import Agent, Conversation
from chat.selectors import client_token_hash
from common.errors import InvalidRequest, Unauthorized
from memories.services import memory_create, memory_delete_many
from projects.auth import key_from_plaintext
from projects.models import ApiKey, Project
from projects.services import key_create

log = logging.getLogger("threadless.chat")

_UNSET: object = object()
SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?$")


# --- agents ------------------------------------------------------------------------------------


def _name(name) -> str:
    if not isinstance(name, str) or not name.strip():
        raise InvalidRequest("name: must be a non-empty string.")
    if len(name) > 200:
        raise InvalidRequest("name: at most 200 characters.")
    return name.strip()


def _free_slug(base: str, exclude: str | None = None) -> str:
    base = (slugify(base)[:70].strip("-") or "agent")
    candidate, n = base, 1
    while Agent.objects.filter(slug=candidate).exclude(pk=exclude or "").exists():
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def _check_slug(slug, exclude: str | None = None) -> str:
    if not isinstance(slug, str) or not SLUG.match(slug):
        raise InvalidRequest("slug: lowercase letters, digits and '-', 1 to 80 characters.")
    if Agent.objects.filter(slug=slug).exclude(pk=exclude or "").exists():
        raise InvalidRequest(f"slug: '{slug}' is already taken (slugs are unique across the installation).")
    return slug


def agent_create(*, project: Project, name: str, config: dict, slug: str | None = None) -> Agent:
    name = _name(name)
    config = config_validate(config)
    slug = _check_slug(slug) if slug is not None else _free_slug(name)
    try:
        with transaction.atomic():
            return Agent.objects.create(project=project, name=name, slug=slug, config=config)
    except IntegrityError:
        raise InvalidRequest(f"slug: '{slug}' is already taken.") from None


def agent_update(*, agent: Agent, name=_UNSET, config=_UNSET, slug=_UNSET) -> Agent:
    if name is not _UNSET:
        agent.name = _name(name)
    if config is not _UNSET:
        agent.config = config_validate(config)
    if slug is not _UNSET and slug is not None and slug != agent.slug:
        agent.slug = _check_slug(slug, exclude=agent.pk)
    try:
        with transaction.atomic():
            agent.save()
    except IntegrityError:
        raise InvalidRequest(f"slug: '{agent.slug}' is already taken.") from None
    return agent


def agent_delete(*, agent: Agent) -> dict:
    """Delete an agent, its conversations and their memories; revoke its publishable keys."""
    memory_ids = list(Conversation.objects.filter(agent=agent).values_list("memory_id", flat=True))
    with transaction.atomic():
        ApiKey.objects.filter(agent_id=agent.id, revoked_at=None).update(revoked_at=timezone.now())
        receipt = memory_delete_many(memory_ids=memory_ids) if memory_ids else {"memories": 0}
        agent.delete()
    return {"conversations": len(memory_ids), **receipt}


DEMO_CONFIG = {
    "description": "The built-in offline demo model: it answers from the memory, deterministically.",
    "memoryPolicy": {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}},
    "workflow": [
        {"id": "llm", "type": "llm", "provider": "demo", "model": "demo",
         "instructions": "You are the Threadless demo agent."},
    ],
}


def agent_ensure_demo(*, project: Project, demo: dict) -> dict:
    """Create (once) the demo agent (`demo` provider) and a publishable key for it.

    Returns keys to merge into var/demo.json: agent_id, agent_slug, publishable_key.
    """

    agent = Agent.objects.filter(project=project, pk=demo.get("agent_id", "")).first()
    if agent is None:
        agent = agent_create(project=project, name="Demo agent", config=DEMO_CONFIG,
                             slug=_free_slug("demo"))
    out = {"agent_id": agent.id, "agent_slug": agent.slug}
    key = None
    try:
        if demo.get("publishable_key"):
            key = key_from_plaintext(demo["publishable_key"])
    except Unauthorized:
        key = None
    if key is not None and key.agent_id == agent.id:
        out["publishable_key"] = demo["publishable_key"]
    else:
        _key, out["publishable_key"] = key_create(project=project, kind="publishable", agent_id=agent.id,
                                                  name="demo widget")
    return out


# --- conversations and turns -------------------------------------------------------------------


def conversation_create(*, agent: Agent, metadata: dict | None = None,
                        with_client_token: bool = False) -> tuple[Conversation, str | None]:
    """A conversation = the agent + a fresh memory carrying the agent's policy.

    With `with_client_token` (publishable-key callers) a client token is returned once; only its
    hash is kept, and every later publishable-key call must present it.
    """
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidRequest("metadata: must be an object.")
    token = secrets.token_urlsafe(24) if with_client_token else None
    with transaction.atomic():
        memory, _ = memory_create(project=agent.project, metadata={**(metadata or {}), "agent": agent.id},
                                  policy=policy_of(agent.config).as_json())
        conversation = Conversation.objects.create(
            project=agent.project, agent=agent, memory=memory, metadata=metadata or {},
            client_token_hash=client_token_hash(token) if token else "",
        )
    return conversation, token


def turn_say(*, conversation: Conversation, text: str, request_id: str = "",
             admit: runner.Admit | None = None) -> dict:
    """Say something and run the turn to its end (not streamed). Returns the turn snapshot."""
    text = check_input(text)
    handle = runner.turn_begin(conversation=conversation, text=text, admit=admit)
    return runner.turn_execute(handle=handle, stream=False, request_id=request_id, conversation=conversation)


def turn_rerun(*, conversation: Conversation, request_id: str = "", admit: runner.Admit | None = None) -> dict:
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


def turn_stream(*, handle: runner.TurnHandle, request_id: str = "",
                slot: turnpool.Slot | None = None) -> AsyncIterator[dict]:
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
            put({"id": 0, "event": "error", "data": {"message": "Something went wrong on our side.",
                                                    "requestId": request_id}})
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


async def turn_say_stream(*, conversation: Conversation, text: str, request_id: str = "",
                          admit: runner.Admit | None = None) -> AsyncIterator[dict]:
    """Streaming say for pages: raises Conflict/InvalidRequest/Unavailable on the first iteration."""
    text = check_input(text)
    handle, slot = await turn_begin_streamed(runner.turn_begin, conversation=conversation, text=text, admit=admit)
    async for event in turn_stream(handle=handle, request_id=request_id, slot=slot):
        yield event


async def turn_rerun_stream(*, conversation: Conversation, request_id: str = "",
                            admit: runner.Admit | None = None) -> AsyncIterator[dict]:
    handle, slot = await turn_begin_streamed(runner.turn_begin_rerun, conversation=conversation, admit=admit)
    async for event in turn_stream(handle=handle, request_id=request_id, slot=slot):
        yield event
