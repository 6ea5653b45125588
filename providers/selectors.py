"""Reads of the operator's runtime egress allow list and its audit trail."""

from __future__ import annotations

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db.models import QuerySet

from providers.models import EgressAllowEntry


def egress_allow_entries() -> QuerySet[EgressAllowEntry]:
    return EgressAllowEntry.objects.select_related("created_by").order_by("value")


def egress_allow_changes(*, limit: int = 20) -> QuerySet[LogEntry]:
    """The newest changes to the runtime list (Django's admin log), newest first."""
    kind = ContentType.objects.get_for_model(EgressAllowEntry)
    return LogEntry.objects.filter(content_type=kind).select_related("user").order_by("-action_time")[:limit]
