"""Reads of webhook endpoints and their delivery log. Every read is scoped by project: another
project's endpoint is a 404 (`endpoint_get`)."""

from __future__ import annotations

from django.db.models import QuerySet

from common.errors import NotFound
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint


def endpoint_list(*, project) -> QuerySet[WebhookEndpoint]:
    return WebhookEndpoint.objects.filter(project=project).order_by("created_at", "id")


def endpoint_get(*, project, endpoint_id: str) -> WebhookEndpoint:
    endpoint = WebhookEndpoint.objects.filter(project=project, pk=endpoint_id).first()
    if endpoint is None:
        raise NotFound("No such webhook endpoint in this project.")
    return endpoint


def endpoints_for(*, project_id: str, type: str) -> list[WebhookEndpoint]:
    """The project's enabled endpoints that want `type` (one indexed read: a project has few).
    Callers emit an event only when this is not empty, so a project without webhooks pays one
    read per change and writes nothing."""
    rows = WebhookEndpoint.objects.filter(project_id=project_id, enabled=True).only(
        "id", "project_id", "events", "include_text"
    )
    return [e for e in rows if type in e.events]


def delivery_get(*, endpoint: WebhookEndpoint, delivery_id: str) -> WebhookDelivery:
    delivery = WebhookDelivery.objects.filter(endpoint=endpoint, pk=delivery_id).first()
    if delivery is None:
        raise NotFound("No such delivery of this endpoint.")
    return delivery


def attempt_log(*, endpoint: WebhookEndpoint) -> QuerySet[WebhookAttempt]:
    """The endpoint's attempts, newest first, each with its delivery (event id and type)."""
    return WebhookAttempt.objects.filter(endpoint=endpoint).select_related("delivery").order_by("-at", "-id")


def endpoints_disabled(*, projects) -> QuerySet[WebhookEndpoint]:
    """Endpoints the failure rule disabled (a reason is kept), of these projects."""
    return (
        WebhookEndpoint.objects.filter(project__in=projects, enabled=False)
        .exclude(disabled_reason="")
        .select_related("project")
        .order_by("-disabled_at")
    )


def endpoint_within(*, projects, endpoint_id: str) -> WebhookEndpoint:
    """An endpoint of one of these projects (the console's visible ones), else a 404."""
    endpoint = (
        WebhookEndpoint.objects.filter(project__in=projects, pk=endpoint_id).select_related("project").first()
    )
    if endpoint is None:
        raise NotFound("No such webhook endpoint.")
    return endpoint
