"""Agents: create, update (400 names the JSON path of a bad config), delete (with their
conversations: a memory of its own whole, a thread of a subject's memory only that thread; their
publishable keys are revoked) and the demo agent."""

from __future__ import annotations

import logging
import re

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from chat.config import config_validate
from chat.models import Agent, Conversation
from chat.services.turns import conversation_delete
from common.errors import InvalidRequest, Unauthorized
from memories.models import DEFAULT_THREAD
from memories.services import memory_delete_many
from projects.auth import key_from_plaintext, keys_changed
from projects.models import ApiKey, Project
from projects.services import key_create

log = logging.getLogger("threadless.chat")

_UNSET: object = object()
SLUG = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?$")


def _name(name) -> str:
    if not isinstance(name, str) or not name.strip():
        raise InvalidRequest("name: must be a non-empty string.")
    if len(name) > 200:
        raise InvalidRequest("name: at most 200 characters.")
    return name.strip()


def _free_slug(base: str, exclude: str | None = None) -> str:
    base = slugify(base)[:70].strip("-") or "agent"
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
    """Delete an agent and its conversations (`conversation_delete`: their own memories whole, a
    subject's memory keeps everything but their threads); revoke its publishable keys."""
    conversations = Conversation.objects.filter(agent=agent)
    memory_ids = list(conversations.filter(thread=DEFAULT_THREAD).values_list("memory_id", flat=True))
    threads = list(conversations.exclude(thread=DEFAULT_THREAD).select_related("memory"))
    with transaction.atomic():
        ApiKey.objects.filter(agent_id=agent.id, revoked_at=None).update(revoked_at=timezone.now())
        keys_changed()  # update() sends no signal: the key caches must drop them now
        receipt = memory_delete_many(memory_ids=memory_ids) if memory_ids else {"memories": 0}
        for conversation in threads:
            for name, count in conversation_delete(conversation=conversation).items():
                receipt[name] = receipt.get(name, 0) + count
        agent.delete()
    return {**receipt, "conversations": len(memory_ids) + len(threads)}


DEMO_CONFIG = {
    "description": "The built-in offline demo model: it answers from the memory, deterministically.",
    "memoryPolicy": {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}},
    "workflow": [
        {
            "id": "llm",
            "type": "llm",
            "provider": "demo",
            "model": "demo",
            "instructions": "You are the Threadless demo agent.",
        },
    ],
}


def agent_ensure_demo(*, project: Project, demo: dict) -> dict:
    """Create (once) the demo agent (`demo` provider) and a publishable key for it.

    Returns keys to merge into var/demo.json: agent_id, agent_slug, publishable_key.
    """

    agent = Agent.objects.filter(project=project, pk=demo.get("agent_id", "")).first()
    if agent is None:
        agent = agent_create(project=project, name="Demo agent", config=DEMO_CONFIG, slug=_free_slug("demo"))
    out = {"agent_id": agent.id, "agent_slug": agent.slug}
    key = None
    try:
        if demo.get("publishable_key"):
            key = key_from_plaintext(demo["publishable_key"], used=False)
    except Unauthorized:
        key = None
    if key is not None and key.agent_id == agent.id:
        out["publishable_key"] = demo["publishable_key"]
    else:
        _key, out["publishable_key"] = key_create(
            project=project, kind="publishable", agent_id=agent.id, name="demo widget"
        )
    return out
