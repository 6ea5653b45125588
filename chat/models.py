"""Agents, conversations, task runs and turn events (the secret store is `projects.models.Secret`).

A conversation's turns are its thread's turns in its memory (`memories.models.Turn`): the user
message that opens a turn is stored by `entries_append`, and the pipeline keeps the turn's state,
actions, task errors and output on that row. Everything here only adds what the memory app does not know.
"""

from __future__ import annotations

from django.db import models

from common.ids import make_id
from memories.models import DEFAULT_THREAD, Memory
from projects.models import Project


def agent_id() -> str:
    return make_id("agt_", 16)


def conversation_id() -> str:
    return make_id("conv_", 20)


class Agent(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=agent_id, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="agents")
    name = models.CharField(max_length=200)
    # Unique across the installation: it names the public chat page /chat/<slug>/.
    slug = models.SlugField(max_length=80, unique=True)
    config = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["project", "-created_at"], name="agent_project_idx")]

    def __str__(self) -> str:
        return f"{self.name} ({self.slug})"

    @property
    def allowed_origins(self) -> list[str]:
        origins = (self.config or {}).get("allowedOrigins") or []
        return [o.rstrip("/") for o in origins if isinstance(o, str)]


class Conversation(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=conversation_id, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="conversations")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="conversations")
    # Either a memory of its own (thread "default"), or a thread of its subject's memory (a project
    # key's `external_id`; the thread is named after the conversation), which other conversations share.
    # No index of its own: the unique (memory, thread) constraint's serves every memory_id lookup.
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="conversations", db_index=False)
    thread = models.CharField(max_length=200, default=DEFAULT_THREAD)
    metadata = models.JSONField(default=dict, blank=True)
    # Conversations started with a publishable key: the hash of the end user's client token.
    client_token_hash = models.CharField(max_length=64, blank=True, default="")
    # Last known state (the turn row is the truth; this is for lists).
    state = models.CharField(max_length=24, default="READY")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["memory", "thread"], name="conversation_memory_thread")
        ]
        indexes = [models.Index(fields=["agent", "-created_at"], name="conversation_agent_idx")]

    @property
    def owns_memory(self) -> bool:
        """The memory is this conversation's alone (not a thread of a subject's shared memory)."""
        return self.thread == DEFAULT_THREAD


class TaskRun(models.Model):
    class Status(models.TextChoices):
        OK = "ok"
        FAILED = "failed"
        SKIPPED = "skipped"
        INTERRUPTED = "interrupted"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="task_runs")
    turn = models.PositiveIntegerField()
    attempt = models.PositiveIntegerField(default=1)
    task_id = models.CharField(max_length=200)
    task_type = models.CharField(max_length=32)
    status = models.CharField(max_length=16, choices=Status.choices)
    duration_ms = models.PositiveIntegerField(default=0)
    # timeout / transport / rate_limit / content_filter / provider / unknown
    error_type = models.CharField(max_length=32, blank=True, default="")
    error_text = models.CharField(max_length=250, blank=True, default="")  # the digest/taskErrors text
    raw_error = models.TextField(blank=True, default="")  # secret-redacted, staff only
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["conversation", "turn", "attempt"], name="taskrun_turn_idx")]


class TurnEvent(models.Model):
    """One SSE event of a turn, stored so every turn is replayable (Last-Event-ID)."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="events")
    turn = models.PositiveIntegerField()
    attempt = models.PositiveIntegerField(default=1)
    seq = models.PositiveIntegerField()  # the SSE id: 1, 2, … within the turn (across attempts)
    name = models.CharField(max_length=24)
    data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["conversation", "turn", "seq"], name="turnevent_unique"),
        ]
