"""The Django side of decorate and report (and their external-id twins): one view for the four
URLs, and their OpenAPI schema from one drf-spectacular extension.

A POST is answered by memories.api.hot, the handler the ASGI entry point also calls for these
paths; this view is how the test client, a WSGI server and THREADLESS_HOT_ROUTES=0 reach it.
"""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiViewExtension
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.views import APIView

from common.http.schema import errors
from memories.api import hot
from memories.api.schema import IDEMPOTENCY, MessageSchema


class HotRouteApi(APIView):
    """decorate or report (`operation`), by memory id or by external id (`external`), as
    memories.api.urls sets them. A POST goes to memories.api.hot without DRF's dispatch (the
    handler does DRF's checks itself, in DRF's order); OPTIONS, a 405 and DRF's `?format=` override
    naming another renderer (a 404) stay on DRF."""

    operation = ""
    external = False

    def dispatch(self, request, *args, **kwargs):
        if request.method == "POST" and request.GET.get("format", "json") == "json":
            return self.post(request, **kwargs)
        return super().dispatch(request, *args, **kwargs)

    def post(self, request, **kwargs):
        ident = kwargs["external_id"] if self.external else kwargs["memory_id"]
        return hot.django_answer(request, hot.Route(self.operation, ident, self.external))


DecorateIn = inline_serializer(
    "DecorateRequest",
    {
        "instructions": serializers.CharField(required=False),
        "messages": MessageSchema.__class__(many=True),
        "budget_tokens": serializers.IntegerField(required=False, default=60000, min_value=1),
        "recall": serializers.BooleanField(required=False, default=True),
        "store": serializers.BooleanField(required=False, default=True),
        "memory_files": serializers.BooleanField(
            required=False,
            default=False,
            help_text=(
                "Add an index of the memory's files (/memories, Anthropic's memory tool) to the context "
                "block."
            ),
        ),
    },
)
DecorateOut = inline_serializer(
    "DecoratedRequest",
    {
        "memory_id": serializers.CharField(),
        "turn": serializers.IntegerField(),
        "instructions": serializers.CharField(),
        "context_text": serializers.CharField(),
        "messages": MessageSchema.__class__(many=True),
        "context": serializers.DictField(),
        "usage": serializers.DictField(child=serializers.IntegerField()),
    },
)
ReportIn = inline_serializer(
    "ReportRequest",
    {
        "messages": MessageSchema.__class__(many=True),
        "failures": inline_serializer(
            "ReportedFailure",
            {
                "task_id": serializers.CharField(),
                "error": serializers.CharField(),
                "output": serializers.JSONField(required=False),
            },
            many=True,
            required=False,
        ),
    },
)
ReportOut = inline_serializer(
    "ReportAccepted",
    {
        "accepted": serializers.IntegerField(),
        "turn": serializers.IntegerField(),
        "task_errors": serializers.ListField(child=serializers.DictField()),
    },
)

# The operation of each URL, by (operation, external).
OPERATIONS = {
    ("decorate", False): {
        "operation_id": "memories_decorate",
        "request": DecorateIn,
        "responses": {200: DecorateOut, **errors(400, 404, 413)},
        "description": "Store this turn's new messages (`store`: false is a dry run) and answer the "
        "whole model request: the instructions, the memory's context block and the newest history "
        "within `budget_tokens`. Never calls a model.",
    },
    ("decorate", True): {
        "operation_id": "memories_decorate_by_external_id",
        "request": DecorateIn,
        "responses": {200: DecorateOut, **errors(400, 413)},
        "description": "decorate on the memory with this `external_id` (URL-encoded), created on first "
        "use: an app keyed by its own user ids needs no create call.",
    },
    ("report", False): {
        "operation_id": "memories_report",
        "request": ReportIn,
        "responses": {202: ReportOut, **errors(400, 404, 413)},
        "description": "Store what came after this turn's decorate (the reply, tool calls and results, "
        "failures), joined to the newest turn; facts, recall and compaction follow in the background.",
    },
    ("report", True): {
        "operation_id": "memories_report_by_external_id",
        "request": ReportIn,
        "responses": {202: ReportOut, **errors(400, 413)},
        "description": "report on the memory with this `external_id` (URL-encoded), created on first use.",
    },
}


class HotRouteSchema(OpenApiViewExtension):
    """The OpenAPI operation of each of HotRouteApi's URLs (OPERATIONS), chosen by the `operation`
    and `external` the URL gives the view."""

    target_class = HotRouteApi

    def view_replacement(self):
        given = self.target_callback.initkwargs
        described = extend_schema(
            parameters=[IDEMPOTENCY], **OPERATIONS[given["operation"], given.get("external", False)]
        )

        class Described(self.target):
            @described
            def post(self, request, **kwargs):
                return super().post(request, **kwargs)

        return Described
