"""End-user limits: what a publishable key (public by design) may spend.

On top of the per-key bucket every key has (`projects.ratelimit.check_rate`), a caller with a
publishable key meets:

* a per-minute bucket per agent and client address (`THREADLESS_END_USER_RATE_PER_IP_PER_MINUTE`;
  IPv6 addresses count per /64) on every end-user route, and one per conversation
  (`…_PER_CONVERSATION_PER_MINUTE`) on the conversation routes, counted after the client token
  is checked, so a stranger cannot use up a real end user's conversation — 429 `rate_limited`;
* an input limit (`THREADLESS_END_USER_MAX_INPUT_CHARS`, 4,000) — 400 naming `input`;
* per agent, a cap on end-user turns running at once (`THREADLESS_END_USER_CONCURRENT_TURNS`,
  config `limits.concurrentTurns`) — 429 `rate_limited`; and a budget of end-user turns per UTC
  day (`THREADLESS_END_USER_TURNS_PER_DAY`, config `limits.turnsPerDay`) — 429
  `quota_exceeded`. Both are checked by `admit_end_user_turn` inside `runner.turn_begin`'s
  transaction with the agent row locked, so they hold across processes;
* no memory metadata: only a project key sets it (`check_no_metadata`, 400 naming `metadata`).

Counters go through `projects.ratelimit.incr` (Redis INCR, or the database's atomic UPDATE).
The client address is REMOTE_ADDR: behind a reverse proxy run uvicorn with
`--forwarded-allow-ips=<proxy>` so it is the end user's address, not the proxy's.
"""

from __future__ import annotations

import hashlib
import ipaddress

from django.conf import settings

from chat.models import Agent, Conversation
from common.errors import InvalidRequest, QuotaExceeded, RateLimited
from memories.models import Turn
from projects.ratelimit import check_bucket, incr_daily


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:20]


def client_address(request) -> str:
    """The caller's address as one bucket: an IPv4 address, or the /64 of an IPv6 one."""
    raw = (request.META.get("REMOTE_ADDR") or "").strip()
    try:
        address = ipaddress.ip_address(raw.split("%", 1)[0])
    except ValueError:
        return raw[:64] or "unknown"
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{address}/64", strict=False))
    return str(address)


def check_address_rate(request, key) -> None:
    """The per-agent, per-address bucket (every end-user route)."""
    limit = settings.THREADLESS_END_USER_RATE_PER_IP_PER_MINUTE
    check_bucket(
        request,
        bucket=f"tl:rl:ip:{key.agent_id}:{_digest(client_address(request))}",
        limit=limit,
        what="from this address to this agent",
        hint="End users share a per-address limit; wait for the seconds in Retry-After.",
    )


def check_conversation_rate(request, conversation: Conversation) -> None:
    """The per-conversation bucket (conversation routes, after the client token matched)."""
    limit = settings.THREADLESS_END_USER_RATE_PER_CONVERSATION_PER_MINUTE
    check_bucket(
        request, bucket=f"tl:rl:cv:{_digest(conversation.pk)}", limit=limit, what="on this conversation"
    )


def check_input(text: str) -> str:
    limit = settings.THREADLESS_END_USER_MAX_INPUT_CHARS
    if limit and len(text) > limit:
        raise InvalidRequest(
            f"input: at most {limit:,} characters for an end user (publishable key).",
            hint="Send a shorter message.",
        )
    return text


def check_no_metadata(data: dict) -> None:
    if data.get("metadata") not in (None, {}):
        raise InvalidRequest(
            "metadata: only a project key may set a conversation's metadata; an end user "
            "(publishable key) cannot.",
            hint="Create the conversation without metadata, or "
            "create it from your server with a project key.",
        )


def agent_limits(agent: Agent) -> tuple[int, int]:
    """(concurrent end-user turns, end-user turns per UTC day) for an agent; 0 = no limit."""
    own = (agent.config or {}).get("limits") or {}
    concurrent = own.get("concurrentTurns", settings.THREADLESS_END_USER_CONCURRENT_TURNS)
    per_day = own.get("turnsPerDay", settings.THREADLESS_END_USER_TURNS_PER_DAY)
    return int(concurrent), int(per_day)


def running_end_user_turns(agent_id: str) -> int:
    """End-user turns of this agent that hold a live lease right now (in any process)."""
    return (
        Turn.objects.filter(
            Turn.running(),
            memory__conversations__agent_id=agent_id,
        )
        .exclude(memory__conversations__client_token_hash="")
        .count()
    )


def admit_end_user_turn(conversation: Conversation) -> None:
    """`runner.turn_begin`'s `admit` for publishable-key callers (inside its transaction).

    The agent row is locked first (PostgreSQL; SQLite's IMMEDIATE transaction already holds the
    write lock), so two processes cannot both see room for one more turn.
    """
    agent = Agent.objects.select_for_update().filter(pk=conversation.agent_id).first() or conversation.agent
    concurrent, per_day = agent_limits(agent)
    if concurrent and running_end_user_turns(agent.pk) >= concurrent:
        raise RateLimited(
            f"This agent is already running {concurrent} end-user turns at once, its limit; "
            "try again in a moment.",
            hint="Wait for the seconds in Retry-After, then say again.",
            headers={"Retry-After": "2"},
        )
    if per_day:
        # Counted here, after every other check passed: a refused request does not use the budget
        # (on the database counter the increment rolls back with the refused turn).
        used, retry = incr_daily(f"tl:day:{agent.pk}")
        if used > per_day:
            raise QuotaExceeded(
                f"This agent's daily budget of {per_day:,} end-user turns is used up.",
                hint="It resets at 00:00 UTC; the agent's owner can raise limits.turnsPerDay.",
                headers={"Retry-After": str(retry)},
            )
