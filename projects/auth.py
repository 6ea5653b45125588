"""Bearer-key authentication for /v1 and the one place API views get their project scope."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission

from common.errors import Unauthorized
from common.http.bearer import bearer_token
from projects import keys
from projects.models import ApiKey

LAST_USED_RESOLUTION = timedelta(seconds=60)


def key_from_plaintext(plaintext: str) -> ApiKey:
    parts = keys.split(plaintext.strip())
    if parts is None:
        raise Unauthorized("The API key is malformed.")
    _kind, lookup, secret = parts
    key = ApiKey.objects.select_related("project").filter(lookup=lookup).first()
    if key is None or not keys.matches(secret, key.hashed):
        raise Unauthorized("The API key is not valid.")
    if key.revoked_at is not None:
        raise Unauthorized("The API key has been revoked.", hint="Create a new key in the console.")
    rehashed = keys.hash_secret(secret)
    if key.hashed != rehashed:
        # It matched a SECRET_KEY_FALLBACKS entry: store the hash under the current SECRET_KEY,
        # so the fallback can be dropped once every key has been used.
        ApiKey.objects.filter(pk=key.pk).update(hashed=rehashed)
        key.hashed = rehashed
    now = timezone.now()
    # Bounded write rate: last_used_at is kept to the minute, not written on every call.
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now
    return key


def key_from_request(request) -> ApiKey | None:
    """The key of a request's `Authorization: Bearer` header (None without one; 401 when bad).

    Sets `request.api_key` on the Django request, for the access log and the rate limiter.
    """
    token = bearer_token(request.META.get("HTTP_AUTHORIZATION", ""))
    if token is None:
        return None
    key = key_from_plaintext(token)
    request.api_key = key
    return key


class ApiKeyAuthentication(BaseAuthentication):
    def authenticate(self, request):
        key = key_from_request(request._request)  # the Django request under DRF's wrapper
        return None if key is None else (None, key)

    def authenticate_header(self, request):
        return "Bearer"


class IsProjectKey(BasePermission):
    """Project-key routes: a publishable key (or none) is 401 unauthorized."""

    def has_permission(self, request, view):
        key = request.auth
        if key is None:
            raise Unauthorized("No API key was sent.")
        if key.kind != ApiKey.Kind.PROJECT:
            raise Unauthorized(
                "A publishable key can only use the end-user chat routes.",
                hint="Use a project key (tl_proj_…) on this route.",
            )
        return True


class ProjectScopedMixin:
    """Every API view's project scope comes from here; another project's id is a 404."""

    @property
    def project(self):
        return self.request.auth.project


try:
    from drf_spectacular.extensions import OpenApiAuthenticationExtension

    class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
        target_class = "projects.auth.ApiKeyAuthentication"
        name = "BearerKey"

        def get_security_definition(self, auto_schema):
            return {"type": "http", "scheme": "bearer", "description": "A project key (tl_proj_…)."}
except ImportError:  # pragma: no cover - spectacular is a hard dependency
    pass
