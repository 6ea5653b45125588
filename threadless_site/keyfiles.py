"""Per-install secrets kept under the var dir, and parsing of the key settings.

Used by settings.py only, so it imports nothing from the apps. A key file is created once with
mode 0600 (written to a temporary file, then hard-linked into place, so two processes starting
at once agree on one value) and read on every later start.
"""

from __future__ import annotations

import base64
import os
import secrets
from collections.abc import Callable
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

# The value this repository once shipped as SECRET_KEY: refused unless DEBUG is on.
DEV_SECRET_KEY = "dev-insecure-threadless-change-me-in-production-0123456789"


def private_var_dir(path: Path) -> Path:
    """The var dir, readable by the account that runs Threadless only.

    It holds the SQLite database (sessions included), demo.json (the admin password and a
    project key in clear), the key files, the broker's messages and the writers' lock files. The
    process umask becomes 077, so every file and folder a Threadless process creates from here
    on (in var/ or not) is 0600 / 0700; the dir itself is set to 0700 and what an older install
    left directly in it is tightened (0600 files, 0700 folders). A var dir this account does not
    own is left as it is.
    """
    os.umask(0o077)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        path.chmod(0o700)
        for child in path.iterdir():
            if child.is_symlink():
                continue
            child.chmod(0o700 if child.is_dir() else 0o600)
    except PermissionError:
        pass
    return path


def _read_or_create(path: Path, make: Callable[[], str]) -> str:
    if path.exists():
        value = path.read_text().strip()
        if value:
            return value
        raise ImproperlyConfigured(f"{path} is empty: delete it to generate a new key, or restore it")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(make() + "\n")
        try:
            os.link(tmp, path)  # atomic, and fails if another process won the race
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)
    return path.read_text().strip()


def install_secret(path: Path) -> str:
    """The per-install SECRET_KEY (created on first use: 64 random URL-safe characters)."""
    return _read_or_create(path, lambda: secrets.token_urlsafe(48))


def new_fernet_key() -> str:
    return base64.urlsafe_b64encode(os.urandom(32)).decode()


def secret_store_keys(configured: list[str], path: Path) -> list[str]:
    """The secret store's Fernet keys, newest first: the configured list, else a key file."""
    keys = configured or [_read_or_create(path, new_fernet_key)]
    for index, key in enumerate(keys):
        try:
            raw = base64.urlsafe_b64decode(key.encode())
        except ValueError:
            raw = b""
        if len(raw) != 32:
            source = "THREADLESS_SECRET_STORE_KEYS" if configured else str(path)
            raise ImproperlyConfigured(
                f"{source}: key {index + 1} is not a Fernet key (32 url-safe base64-encoded bytes); "
                "make one with: python -c 'from cryptography.fernet import Fernet; "
                "print(Fernet.generate_key().decode())'"
            )
    return keys


def proxy_ssl_header(value: str) -> tuple[str, str] | None:
    """'X-Forwarded-Proto' (or 'HTTP_X_FORWARDED_PROTO', optionally ',https') → Django's tuple."""
    value = value.strip()
    if not value:
        return None
    name, _, expected = value.partition(",")
    name = name.strip()
    if not name.upper().startswith("HTTP_"):
        name = "HTTP_" + name.replace("-", "_")
    return name.upper(), (expected.strip() or "https")
