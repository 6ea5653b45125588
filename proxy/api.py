"""`GET /v1/proxy/settings` and `PUT /v1/proxy/settings/{provider}`: the project's upstreams.

The upstream key is write-only: it goes into the project's secret store and is never answered.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from common.http.body import json_object, reject_unknown
from projects.auth import ProjectScopedMixin
from proxy import services

UpstreamOut = inline_serializer(
    "ProxyUpstream",
    {
        "base_url": serializers.CharField(
            allow_null=True, help_text="The project's upstream base URL (null: the provider's official API)."
        ),
        "effective_base_url": serializers.CharField(),
        "api_key_set": serializers.BooleanField(
            help_text="An upstream key is in the project's secret store."
        ),
        "api_key_env": serializers.CharField(
            allow_null=True,
            help_text="A server environment key named by "
            "THREADLESS_PROVIDER_ENV_ALLOW (host pinning applies).",
        ),
    },
)
UpstreamSaved = inline_serializer(
    "ProxyUpstreamSaved",
    {
        **{name: field for name, field in UpstreamOut.fields.items()},
        "api_key_cleared": serializers.BooleanField(
            help_text="The stored key was removed because base_url changed "
            "and this request did not supply a key for the new upstream."
        ),
    },
)
SettingsOut = inline_serializer("ProxySettings", {"openai": UpstreamOut, "anthropic": UpstreamOut})
UpstreamIn = inline_serializer(
    "ProxyUpstreamUpdate",
    {
        "base_url": serializers.CharField(required=False, allow_null=True),
        "api_key": serializers.CharField(
            required=False, allow_null=True, write_only=True, help_text="Stored encrypted; null removes it."
        ),
        "api_key_env": serializers.CharField(required=False, allow_null=True),
    },
)


def _error_responses(*statuses: int) -> dict:
    return {
        s: OpenApiResponse(description="error (SPEC 4.1 shape)")
        for s in sorted({*statuses, 401, 429, 500, 503})
    }


class ProxySettingsApi(ProjectScopedMixin, APIView):
    @extend_schema(operation_id="proxy_settings_get", responses={200: SettingsOut, **_error_responses()})
    def get(self, request):
        return Response(services.upstream_settings(project=self.project))


class ProxyUpstreamApi(ProjectScopedMixin, APIView):
    @extend_schema(
        operation_id="proxy_settings_put",
        request=UpstreamIn,
        responses={200: UpstreamSaved, **_error_responses(400, 404)},
    )
    def put(self, request, provider: str):
        data = json_object(request.data)
        reject_unknown(data, {"base_url", "api_key", "api_key_env"})
        return Response(services.upstream_setting_set(project=self.project, provider=provider, **data))
