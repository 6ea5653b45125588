"""Reads for projects: keys and the secret store's names (never a secret's value)."""

from __future__ import annotations

from django.db.models import QuerySet

from projects.models import ApiKey, Project, Secret


def key_list(*, project: Project) -> QuerySet[ApiKey]:
    return ApiKey.objects.filter(project=project).order_by("-created_at")


def secret_list(*, project: Project) -> list[dict]:
    """Names and masked hints only; the values never leave the store except to a provider call."""
    return [
        {"name": s.name, "hint": s.hint, "updated_at": s.updated_at.isoformat()}
        for s in Secret.objects.filter(project=project).order_by("name")
    ]
