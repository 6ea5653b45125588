"""Per-project upstream settings of the provider-compatible proxy.

Only what is not secret lives here (the base URL, the name of an allowed environment key);
the upstream API key itself is in the project's encrypted secret store under `proxy.<provider>`.
"""

from __future__ import annotations

from django.db import models

from projects.models import Project


class UpstreamSetting(models.Model):
    class Provider(models.TextChoices):
        OPENAI = "openai"
        ANTHROPIC = "anthropic"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="proxy_upstreams")
    provider = models.CharField(max_length=16, choices=Provider.choices)
    base_url = models.CharField(max_length=500, blank=True, default="")
    # An environment variable THREADLESS_PROVIDER_ENV_ALLOW names (host pinning applies).
    api_key_env = models.CharField(max_length=100, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "provider"], name="proxy_upstream_project_provider")
        ]

    def __str__(self) -> str:
        return f"{self.provider} upstream of {self.project_id}"


class MessagesThread(models.Model):
    """The fields an Anthropic Messages server-side thread was created with (`system`, `tools`),
    which the requests that continue it leave out (anthropic ≥ 2.17's `tool_runner`): held per
    memory and thread, as Anthropic's server holds them per thread, and sent upstream again with
    each continuation."""

    memory = models.ForeignKey("memories.Memory", on_delete=models.CASCADE, db_index=False)
    thread = models.CharField(max_length=200)
    fields = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["memory", "thread"], name="proxy_messages_thread_memory_thread")
        ]

    def __str__(self) -> str:
        return f"messages thread {self.thread} of {self.memory_id}"
