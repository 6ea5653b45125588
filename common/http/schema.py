"""OpenAPI pieces every /v1 view family shares: the error body and the statuses any route can answer."""

from __future__ import annotations

import math

from django.utils import timezone
from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers


class StrictCharField(serializers.CharField):
    """A string field that refuses numbers and booleans (DRF's CharField would coerce 5 to "5")."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictFloatField(serializers.FloatField):
    """A finite number; refuses strings and booleans (DRF's FloatField would read "1.5" and true)."""

    def to_internal_value(self, data):
        if type(data) not in (int, float) or not math.isfinite(data):
            self.fail("invalid")
        return super().to_internal_value(data)


class AwareDateTimeField(serializers.DateTimeField):
    """An ISO 8601 time with its UTC offset (DRF's DateTimeField would read a time without one in
    the server's time zone)."""

    default_error_messages = {"invalid": "must be an ISO 8601 time with its UTC offset."}

    def to_internal_value(self, value):
        parsed = None
        if isinstance(value, str):
            try:
                parsed = parse_datetime(value)
            except ValueError:  # well formed, but no such day or hour
                parsed = None
        if parsed is None or timezone.is_naive(parsed):
            self.fail("invalid")
        return parsed


class ErrorSerializer(serializers.Serializer):
    class Inner(serializers.Serializer):
        code = serializers.CharField()
        message = serializers.CharField()
        hint = serializers.CharField()
        request_id = serializers.CharField()
        retryable = serializers.BooleanField()

    error = Inner()


def errors(*statuses: int) -> dict:
    text = {
        400: "invalid_request",
        401: "unauthorized",
        404: "not_found",
        409: "conflict",
        413: "payload_too_large",
        429: "rate_limited or quota_exceeded",
        500: "internal",
        503: "unavailable",
    }
    # Any route can answer 401 (key), 429 (limits), 500 and 503 (database down).
    return {
        s: OpenApiResponse(ErrorSerializer, description=text.get(s, "error"))
        for s in sorted({*statuses, 401, 429, 500, 503})
    }
