"""Projects and what belongs to a project rather than to one memory: keys, usage counters,
rate-limit windows and the secret store.

These tables were created by the `memories` and `chat` apps and keep their names
(`Meta.db_table`); `projects/migrations/0001_initial` only moved them in Django's state.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from common.ids import make_id


def project_id() -> str:
    return make_id("prj_", 16)


class Project(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=project_id, editable=False)
    name = models.CharField(max_length=200)
    # Requests per minute per key; None uses THREADLESS_RATE_LIMIT_PER_MINUTE, 0 turns it off.
    rate_limit_per_minute = models.PositiveIntegerField(null=True, blank=True)
    # Plan allowances; None means unlimited.
    allowance_requests_per_month = models.PositiveIntegerField(null=True, blank=True)
    allowance_memories = models.PositiveIntegerField(null=True, blank=True)
    # Optional retention: memories unused for this many days are forgotten by a periodic task.
    retention_days = models.PositiveIntegerField(null=True, blank=True)
    # Optional model for background work (fact extraction, compaction), shaped like an llm task:
    # {"provider": "openai", "model": "...", "baseUrl": "...", "apiKeyEnv": "..."}. None = offline rules.
    model_config = models.JSONField(null=True, blank=True)
    # Staff accounts that may see and administer the project in the console (superusers see all).
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="threadless_projects")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "memories_project"

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"


class ProjectUsage(models.Model):
    """Per-project monthly request counter, bumped with an atomic UPDATE."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="usage")
    period = models.CharField(max_length=7)  # YYYY-MM
    requests = models.PositiveBigIntegerField(default=0)

    class Meta:
        db_table = "memories_projectusage"
        constraints = [models.UniqueConstraint(fields=["project", "period"], name="usage_project_period")]


class ApiKey(models.Model):
    class Kind(models.TextChoices):
        PROJECT = "project"
        PUBLISHABLE = "publishable"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="keys")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.PROJECT)
    # A publishable key is scoped to one agent: a chat.Agent id, not a foreign key, because
    # agents live in a higher layer (chat) than keys (projects).
    agent_id = models.CharField(max_length=40, blank=True, default="")
    name = models.CharField(max_length=200, blank=True, default="")
    prefix = models.CharField(max_length=40)  # visible part, e.g. tl_proj_AbCd1234
    lookup = models.CharField(max_length=16, unique=True)
    hashed = models.CharField(max_length=64)  # HMAC-SHA256 of the secret part, hex
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "memories_apikey"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @property
    def masked(self) -> str:
        return f"{self.prefix}…"

    def __str__(self) -> str:
        return self.masked


class RateCounter(models.Model):
    """One fixed window of one key's request count (the embedded default; Redis INCR otherwise)."""

    bucket = models.CharField(max_length=80, primary_key=True)
    count = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "memories_ratecounter"


class ApiCall(models.Model):
    """Per-day operation volume for the console's overview (decorate/report counts)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    day = models.DateField()
    operation = models.CharField(max_length=32)
    count = models.PositiveBigIntegerField(default=0)

    class Meta:
        db_table = "memories_apicall"
        constraints = [
            models.UniqueConstraint(fields=["project", "day", "operation"], name="apicall_unique"),
        ]


class Secret(models.Model):
    """A provider API key in the console's secret store, encrypted by projects.secretbox (MultiFernet)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="secrets")
    name = models.CharField(max_length=100)
    ciphertext = models.TextField()
    hint = models.CharField(max_length=16, blank=True, default="")  # last characters, for display
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "chat_secret"
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="secret_project_name")]
