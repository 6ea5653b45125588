"""OpenAPI shapes the memory API's view modules share: a chat message and the Idempotency-Key header.

Schema only: nothing here validates a request (common.messages and the views do).
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, inline_serializer
from rest_framework import serializers

MessageSchema = inline_serializer(
    "Message",
    {
        "role": serializers.ChoiceField(["user", "assistant", "tool", "system"]),
        "content": serializers.JSONField(
            help_text="A string, or a list of parts ({type: text, text} or others)."
        ),
        "name": serializers.CharField(required=False),
        "tool_calls": serializers.ListField(child=serializers.DictField(), required=False),
        "tool_call_id": serializers.CharField(required=False),
    },
)
IDEMPOTENCY = OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER, required=False)
