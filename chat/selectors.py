"""Reads for agents, conversations and turns, all scoped to a project (another project's id is 404).

Snapshots are built here, and so is the end-user (publishable key) view of them: provider text
never reaches a publishable-key caller — `public_snapshot` / `public_event` replace every
taskErrors entry and `task_failed.error` with a generic message.
"""

from __future__ import annotations

import hashlib
import hmac

from django.db.models import QuerySet

from chat.models import Agent, Conversation, TaskRun, TurnEvent
from common.errors import NotFound
from memories.models import Turn
from projects.models import Project

GENERIC_ERROR = {"type": "error", "message": "Something went wrong"}
GENERIC_TEXT = "Something went wrong"


def agent_list(*, project: Project) -> QuerySet[Agent]:
    return Agent.objects.filter(project=project).order_by("-created_at", "-id")


def agent_get(*, project: Project, agent_id: str) -> Agent:
    agent = Agent.objects.filter(project=project, pk=agent_id).first()
    if agent is None:
        raise NotFound(
            f"No agent '{agent_id}' in this project.", hint="Use an id that POST /v1/agents returned."
        )
    return agent


def agent_by_slug(*, slug: str) -> Agent | None:
    return Agent.objects.select_related("project").filter(slug=slug).first()


def conversation_get(*, project: Project, conversation_id: str) -> Conversation:
    conversation = (
        Conversation.objects.select_related("agent", "memory")
        .filter(project=project, pk=conversation_id)
        .first()
    )
    if conversation is None:
        raise NotFound(
            f"No conversation '{conversation_id}' in this project.",
            hint="Use an id that POST /v1/agents/{id}/conversations returned.",
        )
    return conversation


def conversation_list(*, agent: Agent) -> QuerySet[Conversation]:
    return Conversation.objects.filter(agent=agent).order_by("-created_at", "-id")


def client_token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def client_token_matches(conversation: Conversation, token: str | None) -> bool:
    if not conversation.client_token_hash or not token:
        return False
    return hmac.compare_digest(conversation.client_token_hash, client_token_hash(token))


def turn_state(turn: Turn) -> str:
    """A running turn whose lease expired (its process died) reads as EXECUTION_INTERRUPTED."""
    if turn.state == Turn.State.IN_PROGRESS and turn.lease_expired:
        return Turn.State.EXECUTION_INTERRUPTED
    return turn.state


def snapshot_of(
    *, conversation_id: str, turn: int, state: str, output: list, actions: list, task_errors: list
) -> dict:
    return {
        "conversationId": conversation_id,
        "turn": turn,
        "conversationState": state,
        "output": list(output or []),
        "actions": list(actions or []),
        "taskErrors": list(task_errors or []),
    }


def turn_snapshot(*, conversation: Conversation, turn: Turn) -> dict:
    return snapshot_of(
        conversation_id=conversation.id,
        turn=turn.number,
        state=turn_state(turn),
        output=turn.output,
        actions=turn.actions,
        task_errors=turn.task_errors,
    )


def public_snapshot(snapshot: dict) -> dict:
    """What a publishable-key caller may see: no taskErrors text, ever."""
    return {**snapshot, "taskErrors": [dict(GENERIC_ERROR) for _ in snapshot.get("taskErrors") or []]}


def public_event(event: dict) -> dict:
    name, data = event["event"], event["data"]
    if name == "task_failed":
        data = {**data, "error": GENERIC_TEXT if data.get("error") is not None else None}
    elif name == "done":
        data = {**data, "snapshot": public_snapshot(data["snapshot"])}
    elif name == "error":
        data = {"message": GENERIC_TEXT, "requestId": data.get("requestId", "")}
    return {**event, "data": data}


def conversation_turns(*, conversation: Conversation) -> QuerySet[Turn]:
    """The turns of the conversation's thread in its memory."""
    turns = Turn.objects.filter(memory_id=conversation.memory_id, thread=conversation.thread)
    return turns.order_by("number")


def conversation_state(*, conversation: Conversation) -> str:
    last = conversation_turns(conversation=conversation).order_by("-number").first()
    return turn_state(last) if last is not None else "READY"


def conversation_json(*, conversation: Conversation, turns: bool = False, public: bool = False) -> dict:
    out = {
        "id": conversation.id,
        "agentId": conversation.agent_id,
        "memoryId": conversation.memory_id,
        "thread": conversation.thread,
        "conversationState": conversation_state(conversation=conversation),
    }
    if turns:
        snaps = [
            turn_snapshot(conversation=conversation, turn=t)
            for t in conversation_turns(conversation=conversation)
        ]
        out["turns"] = [public_snapshot(s) for s in snaps] if public else snaps
    return out


def turn_get(*, conversation: Conversation, number: int) -> Turn:
    turn = conversation_turns(conversation=conversation).filter(number=number).first()
    if turn is None:
        raise NotFound(f"No turn {number} in this conversation.", hint="Turn numbers start at 1.")
    return turn


def turn_events(
    *, conversation: Conversation, turn: int, after: int | None, attempt: int | None = None
) -> list[dict]:
    """Recorded events of a turn: after the given event id, or (None) from the start of `attempt`."""
    qs = TurnEvent.objects.filter(conversation=conversation, turn=turn)
    if after is not None:
        qs = qs.filter(seq__gt=after)
    elif attempt is not None:
        qs = qs.filter(attempt__gte=attempt)
    return [
        {"id": seq, "event": name, "data": data, "attempt": att}
        for seq, name, data, att in qs.order_by("seq").values_list("seq", "name", "data", "attempt")
    ]


def task_runs(*, conversation: Conversation, turn: int | None = None) -> QuerySet[TaskRun]:
    qs = TaskRun.objects.filter(conversation=conversation)
    if turn is not None:
        qs = qs.filter(turn=turn)
    return qs.order_by("turn", "attempt", "id")
