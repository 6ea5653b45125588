"""Webhook endpoints, the deliveries of events to them, and each delivery attempt (the log).

A `WebhookDelivery` row is written in the transaction of the change its event tells about, so it
is the queue: handed to the broker after commit, swept when the broker was down, retried on its
own schedule (webhooks.schedule), never lost with the memory it was about.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from common.ids import make_id
from projects.models import Project


def endpoint_id() -> str:
    return make_id("whk_", 16)


def delivery_id() -> str:
    return make_id("dlv_", 20)


class WebhookEndpoint(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=endpoint_id, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    url = models.CharField(max_length=2000)
    events = models.JSONField(default=list)  # event types, webhooks.events.EVENT_TYPES
    enabled = models.BooleanField(default=True)
    include_text = models.BooleanField(default=False)  # message and fact text in `data`
    # The signing secret (`whsec_…`), encrypted by the secret store's keys (projects.secretbox);
    # after a rotation the previous one keeps signing too until `previous_expires_at`.
    secret = models.TextField()
    previous_secret = models.TextField(blank=True, default="")
    previous_expires_at = models.DateTimeField(null=True, blank=True)
    # The first failure since the last success; a day of failures disables the endpoint.
    failing_since = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.CharField(max_length=500, blank=True, default="")
    disabled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)


class WebhookDelivery(models.Model):
    """One event for one endpoint: the body exactly as sent (every attempt sends the same bytes
    and the same `webhook-id`, the event's id), and where its attempts stand."""

    class State(models.TextChoices):
        PENDING = "pending"
        DELIVERED = "delivered"
        FAILED = "failed"

    id = models.CharField(primary_key=True, max_length=40, default=delivery_id, editable=False)
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    event_id = models.CharField(max_length=40)
    type = models.CharField(max_length=40)
    body = models.TextField()
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    claimed_at = models.DateTimeField(null=True, blank=True)
    first_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "event_id"], name="webhook_delivery_event_unique")
        ]
        indexes = [
            # The sweep's read: waiting deliveries whose time has come, and nothing else.
            models.Index(
                fields=["next_attempt_at"], name="webhook_delivery_due_idx", condition=Q(state="pending")
            ),
            models.Index(fields=["created_at"], name="webhook_delivery_age_idx"),
        ]


class WebhookAttempt(models.Model):
    """One try at a delivery: what the endpoint answered (status, latency, the first bytes of its
    answer, redacted) or why nothing came back (`error`)."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="log")
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="+", db_index=False)
    number = models.PositiveIntegerField()  # the delivery's attempt number, from 1
    at = models.DateTimeField()
    status = models.PositiveSmallIntegerField(null=True)  # HTTP status; None when no answer came
    latency_ms = models.PositiveIntegerField(default=0)
    response_head = models.CharField(max_length=300, blank=True, default="")
    error = models.CharField(max_length=500, blank=True, default="")
    outcome = models.CharField(max_length=16)  # delivered / retrying / failed

    class Meta:
        indexes = [models.Index(fields=["endpoint", "-at", "-id"], name="webhook_attempt_log_idx")]
