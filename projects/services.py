"""Writes for projects, their keys, usage counters and the secret store.

The secret store (`projects.secretbox`: MultiFernet over THREADLESS_SECRET_STORE_KEYS,
`manage.py rotate_secrets`) keeps provider keys encrypted; `secret_value` is the only way back
to a plaintext, and callers pass that plaintext to a provider client (`providers`), which
never reads a key itself. Key plaintexts are returned once by `key_create` and never stored.
"""

from __future__ import annotations

import re

from django.utils import timezone

from common.db import plain_cursor
from common.errors import InvalidRequest, NotFound
from projects import keys, secretbox, usage
from projects.models import ApiKey, Project, Secret


def project_create(
    *,
    name: str,
    rate_limit_per_minute: int | None = None,
    allowance_requests_per_month: int | None = None,
    allowance_memories: int | None = None,
) -> Project:
    if not name.strip():
        raise InvalidRequest("name: must not be empty.")
    return Project.objects.create(
        name=name.strip()[:200],
        rate_limit_per_minute=rate_limit_per_minute,
        allowance_requests_per_month=allowance_requests_per_month,
        allowance_memories=allowance_memories,
    )


def key_create(
    *, project: Project, kind: str = "project", agent_id: str = "", name: str = ""
) -> tuple[ApiKey, str]:
    """Create a key; the plaintext is returned here once and never stored."""
    if kind not in keys.KIND_PREFIX:
        raise InvalidRequest("kind: must be 'project' or 'publishable'.")
    if kind == "publishable" and not agent_id:
        raise InvalidRequest("agent: a publishable key belongs to one agent.")
    plaintext, visible, lookup, hashed = keys.generate(kind)
    key = ApiKey.objects.create(
        project=project,
        kind=kind,
        agent_id=agent_id if kind == "publishable" else "",
        name=name[:200],
        prefix=visible,
        lookup=lookup,
        hashed=hashed,
    )
    return key, plaintext


def key_revoke(*, prefix: str, project: Project | None = None) -> ApiKey:
    qs = ApiKey.objects.filter(prefix=prefix)
    if project is not None:
        qs = qs.filter(project=project)
    key = qs.first()
    if key is None:
        raise NotFound(f"No key with prefix '{prefix}'.")
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
    return key


def usage_count(*, project: Project, operation: str) -> None:
    """Per-day volume for the console: counted in the counter store, copied to `ApiCall` by the
    periodic flush (projects.usage), so no request writes a row the whole project shares."""
    usage.count_operation(project_id=project.pk, operation=operation)


# --- secret store ------------------------------------------------------------------------------

# Names the proxy keeps its upstream keys under (`proxy.openai`): each is bound to the base URL it
# was saved for, so nothing else may name one (an agent's apiKeySecret would send it anywhere).
PROXY_SECRET_PREFIX = "proxy."


def secret_name_reserved(name: str) -> bool:
    return isinstance(name, str) and name.lower().startswith(PROXY_SECRET_PREFIX)


def secret_set(*, project: Project, name: str, value: str) -> Secret:
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", name):
        raise InvalidRequest("name: letters, digits, '_', '.' and '-', at most 100 characters.")
    if not isinstance(value, str) or not value.strip():
        raise InvalidRequest("value: must be a non-empty string.")
    value = value.strip()
    token = secretbox.encrypt(value)
    hint = "…" + value[-4:] if len(value) >= 12 else "…"
    secret, _ = Secret.objects.update_or_create(
        project=project, name=name, defaults={"ciphertext": token, "hint": hint}
    )
    return secret


def secret_delete(*, project: Project, name: str) -> None:
    deleted, _ = Secret.objects.filter(project=project, name=name).delete()
    if not deleted:
        raise NotFound(f"No secret '{name}' in this project.")


_SECRET_SQL = f"SELECT ciphertext FROM {Secret._meta.db_table} WHERE project_id = %s AND name = %s"


def secret_value(*, project_id: str, name: str) -> str:
    """The plaintext of a project's secret (LookupError when there is none or it cannot be
    decrypted). A plain query by the (project, name) unique pair: the proxy reads its upstream key
    on every call, and the ORM's query compilation cost more than the read and the decryption."""
    with plain_cursor(prepare=True) as cursor:
        cursor.execute(_SECRET_SQL, [project_id, name])
        row = cursor.fetchone()
    if row is None:
        raise LookupError(f"the secret '{name}' is not in the project's secret store")
    try:
        return secretbox.decrypt(row[0])
    except secretbox.InvalidToken:
        raise LookupError(
            f"the secret '{name}' cannot be decrypted (is its key missing from THREADLESS_SECRET_STORE_KEYS?)"
        ) from None
