"""Strict environment helpers: a bad value is an ImproperlyConfigured, never a silent default."""

from __future__ import annotations

import os
import re

from django.core.exceptions import ImproperlyConfigured


def envstr(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def envbool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {value!r}")


def envint(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from None


def envlist(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


# `NAME` or `NAME@host[:port][/path]` (host a name, an IPv4 address or a bracketed IPv6 address;
# path plain segments). Linear: each part is one character class, and ':' / ']' / '/' end the
# class before them.
_KEY_ENTRY = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]{0,99}(?:@(?:\[[0-9A-Fa-f:.]{2,45}\]|[A-Za-z0-9.-]{1,253})"
    r"(?::[0-9]{1,5})?(?:/[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,99}){0,10}/?)?"
)


def envkeylist(name: str, default: str = "") -> list[str]:
    """THREADLESS_PROVIDER_ENV_ALLOW: comma-separated `NAME` / `NAME@host[:port][/path]` entries."""
    entries = envlist(name, default)
    for entry in entries:
        if not _KEY_ENTRY.fullmatch(entry):
            raise ImproperlyConfigured(f"{name}: {entry[:100]!r} is not NAME or NAME@host[:port][/path]")
    return entries


def envfloat(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {value!r}") from None
