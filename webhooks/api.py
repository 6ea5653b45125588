"""/v1/webhooks: a project's endpoints, their signing secret (shown once), a test event, and the
delivery log with "send again" (SPEC 4.12). One view per route, thin; every endpoint is read
through `selectors.endpoint_get(project=…)`, so another project's id is a 404."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from common.http.body import json_object, reject_unknown
from common.http.pagination import page_by_time
from common.http.schema import errors
from projects.auth import ProjectScopedMixin
from webhooks import selectors, services
from webhooks.events import EVENT_TYPES
from webhooks.models import WebhookAttempt, WebhookEndpoint

EventType = serializers.ChoiceField(list(EVENT_TYPES))

EndpointOut = inline_serializer(
    "WebhookEndpoint",
    {
        "id": serializers.CharField(),
        "url": serializers.CharField(),
        "events": serializers.ListField(child=EventType),
        "enabled": serializers.BooleanField(),
        "include_text": serializers.BooleanField(help_text="Message and fact text are in events' data."),
        "disabled_reason": serializers.CharField(
            allow_null=True, help_text="Why deliveries disabled the endpoint (a day of failures)."
        ),
        "failing_since": serializers.DateTimeField(allow_null=True),
        "previous_secret_expires_at": serializers.DateTimeField(
            allow_null=True, help_text="Until then the previous secret signs deliveries too."
        ),
        "created_at": serializers.DateTimeField(),
        "updated_at": serializers.DateTimeField(),
    },
)
EndpointWithSecret = inline_serializer(
    "WebhookEndpointWithSecret",
    {
        **EndpointOut.fields,
        "secret": serializers.CharField(help_text="whsec_…: the signing secret, shown this once."),
    },
)
AttemptOut = inline_serializer(
    "WebhookAttempt",
    {
        "id": serializers.IntegerField(),
        "delivery_id": serializers.CharField(),
        "event_id": serializers.CharField(help_text="The webhook-id header: the same on every attempt."),
        "type": serializers.CharField(),
        "attempt": serializers.IntegerField(),
        "at": serializers.DateTimeField(),
        "status": serializers.IntegerField(allow_null=True, help_text="HTTP status; null: no answer."),
        "outcome": serializers.ChoiceField(["delivered", "retrying", "failed"]),
        "latency_ms": serializers.IntegerField(),
        "response": serializers.CharField(help_text="The answer's first 200 characters, secrets redacted."),
        "error": serializers.CharField(allow_null=True),
    },
)
DeliveryQueued = inline_serializer(
    "WebhookDeliveryQueued",
    {
        "delivery_id": serializers.CharField(),
        "event_id": serializers.CharField(),
        "state": serializers.CharField(),
    },
)


def endpoint_json(endpoint: WebhookEndpoint) -> dict:
    previous = endpoint.previous_expires_at if endpoint.previous_secret else None
    return {
        "id": endpoint.pk,
        "url": endpoint.url,
        "events": endpoint.events,
        "enabled": endpoint.enabled,
        "include_text": endpoint.include_text,
        "disabled_reason": endpoint.disabled_reason or None,
        "failing_since": endpoint.failing_since.isoformat() if endpoint.failing_since else None,
        "previous_secret_expires_at": previous.isoformat() if previous else None,
        "created_at": endpoint.created_at.isoformat(),
        "updated_at": endpoint.updated_at.isoformat(),
    }


def attempt_json(attempt: WebhookAttempt) -> dict:
    return {
        "id": attempt.pk,
        "delivery_id": attempt.delivery_id,
        "event_id": attempt.delivery.event_id,
        "type": attempt.delivery.type,
        "attempt": attempt.number,
        "at": attempt.at.isoformat(),
        "status": attempt.status,
        "outcome": attempt.outcome,
        "latency_ms": attempt.latency_ms,
        "response": attempt.response_head,
        "error": attempt.error or None,
    }


class _EndpointRoute(ProjectScopedMixin, APIView):
    def _endpoint(self, endpoint_id: str) -> WebhookEndpoint:
        return selectors.endpoint_get(project=self.project, endpoint_id=endpoint_id)


class WebhookListApi(ProjectScopedMixin, APIView):
    class CreateInput(serializers.Serializer):
        url = serializers.CharField(max_length=2000)
        events = serializers.ListField(child=serializers.CharField(max_length=40), max_length=20)
        enabled = serializers.BooleanField(required=False, default=True)
        include_text = serializers.BooleanField(required=False, default=False)

    @extend_schema(
        operation_id="webhooks_list",
        responses={
            200: inline_serializer("WebhookList", {"data": EndpointOut.__class__(many=True)}),
            **errors(),
        },
    )
    def get(self, request):
        return Response({"data": [endpoint_json(e) for e in selectors.endpoint_list(project=self.project)]})

    @extend_schema(
        operation_id="webhooks_create",
        request=CreateInput,
        responses={201: EndpointWithSecret, **errors(400)},
    )
    def post(self, request):
        data = json_object(request.data)
        reject_unknown(data, {"url", "events", "enabled", "include_text"})
        serializer = self.CreateInput(data=data)
        serializer.is_valid(raise_exception=True)
        endpoint, secret = services.endpoint_create(project=self.project, **serializer.validated_data)
        return Response({**endpoint_json(endpoint), "secret": secret}, status=201)


class WebhookDetailApi(_EndpointRoute):
    class UpdateInput(serializers.Serializer):
        url = serializers.CharField(required=False, max_length=2000)
        events = serializers.ListField(
            child=serializers.CharField(max_length=40), required=False, max_length=20
        )
        enabled = serializers.BooleanField(required=False)
        include_text = serializers.BooleanField(required=False)

    @extend_schema(operation_id="webhooks_get", responses={200: EndpointOut, **errors(404)})
    def get(self, request, endpoint_id: str):
        return Response(endpoint_json(self._endpoint(endpoint_id)))

    @extend_schema(
        operation_id="webhooks_update", request=UpdateInput, responses={200: EndpointOut, **errors(400, 404)}
    )
    def patch(self, request, endpoint_id: str):
        endpoint = self._endpoint(endpoint_id)
        data = json_object(request.data)
        reject_unknown(data, {"url", "events", "enabled", "include_text"})
        serializer = self.UpdateInput(data=data)
        serializer.is_valid(raise_exception=True)
        return Response(
            endpoint_json(services.endpoint_update(endpoint=endpoint, **serializer.validated_data))
        )

    @extend_schema(operation_id="webhooks_delete", responses={204: None, **errors(404)})
    def delete(self, request, endpoint_id: str):
        services.endpoint_delete(endpoint=self._endpoint(endpoint_id))
        return Response(status=204)


class WebhookRotateApi(_EndpointRoute):
    @extend_schema(
        operation_id="webhooks_rotate_secret",
        request=None,
        responses={200: EndpointWithSecret, **errors(404)},
        description="A new signing secret, shown this once; the previous one keeps signing for 24 hours.",
    )
    def post(self, request, endpoint_id: str):
        endpoint = self._endpoint(endpoint_id)
        secret = services.endpoint_rotate(endpoint=endpoint)
        return Response({**endpoint_json(endpoint), "secret": secret})


class WebhookTestApi(_EndpointRoute):
    @extend_schema(
        operation_id="webhooks_test",
        request=None,
        responses={202: DeliveryQueued, **errors(404)},
        description="Send a `webhook.test` event to the endpoint now (also when it is disabled).",
    )
    def post(self, request, endpoint_id: str):
        delivery = services.endpoint_test(endpoint=self._endpoint(endpoint_id))
        return Response(
            {"delivery_id": delivery.pk, "event_id": delivery.event_id, "state": delivery.state}, status=202
        )


class WebhookDeliveryListApi(_EndpointRoute):
    @extend_schema(
        operation_id="webhooks_deliveries",
        parameters=[OpenApiParameter("limit", int), OpenApiParameter("cursor", str)],
        responses={
            200: inline_serializer(
                "WebhookAttemptList",
                {
                    "data": AttemptOut.__class__(many=True),
                    "next_cursor": serializers.CharField(allow_null=True),
                },
            ),
            **errors(400, 404),
        },
    )
    def get(self, request, endpoint_id: str):
        endpoint = self._endpoint(endpoint_id)
        return page_by_time(selectors.attempt_log(endpoint=endpoint), request, "at", attempt_json, default=50)


class WebhookDeliveryRetryApi(_EndpointRoute):
    @extend_schema(
        operation_id="webhooks_delivery_retry",
        request=None,
        responses={202: DeliveryQueued, **errors(404)},
        description="Send the delivery again now: the same event id and body.",
    )
    def post(self, request, endpoint_id: str, delivery_id: str):
        delivery = selectors.delivery_get(endpoint=self._endpoint(endpoint_id), delivery_id=delivery_id)
        delivery = services.delivery_resend(delivery=delivery)
        return Response(
            {"delivery_id": delivery.pk, "event_id": delivery.event_id, "state": delivery.state}, status=202
        )
