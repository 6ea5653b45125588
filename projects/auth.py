"""Bearer-key authentication for /v1 and the one place API views get their project scope.

A key's row (with its project) is looked up once per process and kept for
THREADLESS_KEY_CACHE_SECONDS, keyed by its lookup prefix; the secret is still checked against the
row's HMAC on every request. Revocation is immediate everywhere: every request reads the
deployment's key generation from the counter store (common.counters: one GET in Redis, one indexed
read of the counter file; on rate-limited API views in the same round trip as the request's
counts, before the view runs: `confirm`), every saved or deleted key or project bumps it (`keys_changed`, at
the change and again at its commit), and a cached row is used only under the generation it was read
in. Code that changes keys with `QuerySet.update()` (no signals) calls `keys_changed()` itself.
"""

from __future__ import annotations

import time
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission

from common import counters, logs
from common.errors import Unauthorized
from common.http.bearer import bearer_token
from projects import keys
from projects.models import ApiKey, Project

LAST_USED_RESOLUTION = timedelta(seconds=60)
GENERATION = "tl:keys:generation"
GENERATION_TTL = 400 * 86400  # an expired generation reads 0: a change too, so every cache drops


class KeyCache:
    """This process's key rows: lookup → (row, expires, generation it was read in)."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[ApiKey, float, int]] = {}

    def get(self, lookup: str, *, deferred: bool = False) -> tuple[ApiKey | None, int | None]:
        """The key row and, when `deferred` found it cached, the generation it was read in (the
        caller compares it with the current one in its own round trip before the request runs:
        `confirm`); None when it was checked here."""
        seconds = settings.THREADLESS_KEY_CACHE_SECONDS
        if seconds <= 0:
            return _key_row(lookup), None
        now = time.monotonic()
        hit = self.rows.get(lookup)
        if deferred and hit is not None and hit[1] > now:
            return hit[0], hit[2]
        generation = counters.store().get(GENERATION)
        if hit is not None and hit[2] == generation and hit[1] > now:
            return hit[0], None
        if len(self.rows) > 10_000:  # only existing keys are kept, but stay bounded anyway
            self.rows = {}
        key = _key_row(lookup)
        if key is not None:
            # Tagged with the generation read *before* the row: a change that lands in between
            # makes this entry stale at the next request instead of hiding the change.
            self.rows[lookup] = (key, now + seconds, generation)
        return key, None

    def drop(self, lookup: str) -> None:
        self.rows.pop(lookup, None)


_cache = KeyCache()


def _key_row(lookup: str) -> ApiKey | None:
    return ApiKey.objects.select_related("project").filter(lookup=lookup).first()


def keys_changed() -> None:
    """A key or project changed: every process drops its cached keys before its next request.

    Bumped now and again when the transaction commits, so a process that re-reads the row in
    between (still the old one) drops it once more after the commit.
    """
    counters.incr(GENERATION, GENERATION_TTL)
    transaction.on_commit(lambda: counters.incr(GENERATION, GENERATION_TTL))


def _changed(sender, **kwargs) -> None:
    keys_changed()


def connect_signals() -> None:
    """Called by ProjectsConfig.ready(), so every process (web, worker, commands) bumps it."""
    for model in (ApiKey, Project):
        post_save.connect(_changed, sender=model, dispatch_uid=f"keys_changed_save_{model.__name__}")
        post_delete.connect(_changed, sender=model, dispatch_uid=f"keys_changed_delete_{model.__name__}")


def key_from_plaintext(plaintext: str, *, used: bool = True) -> ApiKey:
    """The key a plaintext names, checked (401 when it is not valid). `used=False` checks it
    without counting as a use (`last_used_at` stays), for tools that only ask whether it is valid."""
    return _key_checked(plaintext, used=used)[0]


def _key_checked(plaintext: str, *, deferred: bool = False, used: bool = True) -> tuple[ApiKey, int | None]:
    """The key and, if `deferred` used a cached row unchecked, the generation to check it in."""
    parts = keys.split(plaintext.strip())
    if parts is None:
        raise Unauthorized("The API key is malformed.")
    _kind, lookup, secret = parts
    key, unconfirmed = _cache.get(lookup, deferred=deferred)
    valid, rehashed = keys.check(secret, key.hashed) if key is not None else (False, "")
    if not valid:
        raise Unauthorized("The API key is not valid.")
    if key.revoked_at is not None:
        raise Unauthorized("The API key has been revoked.", hint="Create a new key in the console.")
    if key.hashed != rehashed:
        # It matched a SECRET_KEY_FALLBACKS entry: store the hash under the current SECRET_KEY,
        # so the fallback can be dropped once every key has been used.
        ApiKey.objects.filter(pk=key.pk).update(hashed=rehashed)
        key.hashed = rehashed
    now = timezone.now()
    # Bounded write rate: last_used_at is kept to the minute, not written on every call.
    if used and (key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION):
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now
    logs.bind(project_id=key.project_id)
    return key, unconfirmed


def key_for_header(header: str, *, deferred: bool = False) -> tuple[ApiKey | None, int | None]:
    """The key of an `Authorization` header's value and, if `deferred` used a cached row
    unchecked, the generation to confirm it in (None, None without a header; 401 when bad)."""
    token = bearer_token(header)
    if token is None:
        return None, None
    return _key_checked(token, deferred=deferred)


def require_project_key(key: ApiKey | None) -> ApiKey:
    """Project-key routes: no key, or a publishable one, is 401 unauthorized."""
    if key is None:
        raise Unauthorized("No API key was sent.")
    if key.kind != ApiKey.Kind.PROJECT:
        raise Unauthorized(
            "A publishable key can only use the end-user chat routes.",
            hint="Use a project key (tl_proj_…) on this route.",
        )
    return key


def key_from_request(request, *, deferred: bool = False) -> ApiKey | None:
    """The key of a request's `Authorization: Bearer` header (None without one; 401 when bad).

    Sets `request.api_key` on the Django request, for the access log and the rate limiter.
    """
    key, request.key_unconfirmed = key_for_header(
        request.META.get("HTTP_AUTHORIZATION", ""), deferred=deferred
    )
    if key is None:
        return None
    request.api_key = key
    return key


def confirm(request, generation: int) -> ApiKey:
    """The request's key under the generation its throttle just read (in the same round trip as
    its counts): the cached row when it was read in that generation, else the row read again and
    checked (401 if it is revoked or gone). Sets `request.api_key` to what it returns."""
    key, unconfirmed = request.api_key, request.key_unconfirmed
    request.key_unconfirmed = None
    if unconfirmed is None or unconfirmed == generation:
        return key
    _cache.drop(key.lookup)
    return key_from_request(request)


class ApiKeyAuthentication(BaseAuthentication):
    """On a view whose throttle confirms the key (`confirms_key`: projects.ratelimit), a cached key
    row is checked against the current generation in the throttle's own counter round trip,
    before anything else of the request runs; elsewhere here, with one read of its own."""

    def authenticate(self, request):
        view = (getattr(request, "parser_context", None) or {}).get("view")
        deferred = view is not None and any(getattr(t, "confirms_key", False) for t in view.get_throttles())
        key = key_from_request(request._request, deferred=deferred)  # the Django request under DRF's wrapper
        return None if key is None else (None, key)

    def authenticate_header(self, request):
        return "Bearer"


class IsProjectKey(BasePermission):
    """Project-key routes: a publishable key (or none) is 401 unauthorized."""

    def has_permission(self, request, view):
        require_project_key(request.auth)
        return True


class ProjectScopedMixin:
    """Every API view's project scope comes from here; another project's id is a 404."""

    @property
    def project(self):
        return self.request.auth.project


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "projects.auth.ApiKeyAuthentication"
    name = "BearerKey"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "A project key (tl_proj_…)."}
