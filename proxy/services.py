"""The proxy's writes and look-ups: upstream settings, which memory a call uses, decorate, report.

Synchronous (the views run them through `sync_to_async`). Memory work goes through the memory
app's public services only, so a proxied call stores and reports exactly as /v1 decorate and
report do: the report through the outbox, failures under the memory's policy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from common.db import plain_cursor
from common.errors import InvalidRequest, NotFound
from common.messages import reply_cut, stored_reply_limit, validate_messages
from memories.models import DEFAULT_THREAD, Entry
from memories.policy import policy_parse
from memories.selectors import memory_get, thread_view
from memories.services import external_id_check, memory_create, memory_decorate, report_accept
from projects.services import PROXY_SECRET_PREFIX, secret_delete, secret_set, secret_value, usage_count
from providers.egress import (
    EGRESS_HINT,
    base_url_refusal,
    egress_refusal,
    provider_env_names,
    provider_env_refusal,
)
from proxy.models import UpstreamSetting
from proxy.protocols import PROTOCOLS, Protocol, new_messages, without_reasoning

_UNSET: Any = object()
MAX_BUDGET = 2_000_000


def secret_name(provider: str) -> str:
    """Where a provider's upstream key is stored: a name agent configs may not use (projects.services)."""
    return f"{PROXY_SECRET_PREFIX}{provider}"


def _provider(provider: str) -> Protocol:
    if provider not in PROTOCOLS:
        raise NotFound(f"No proxy provider '{provider}'.", hint="Use 'openai' or 'anthropic'.")
    return PROTOCOLS[provider]


# --- upstream settings -------------------------------------------------------------------------


def _has_key(project, provider: str) -> bool:
    try:
        secret_value(project_id=project.pk, name=secret_name(provider))
        return True
    except LookupError:
        return False


def upstream_settings(*, project) -> dict:
    """Both providers' settings as the API and console show them (never the key itself)."""
    rows = {s.provider: s for s in UpstreamSetting.objects.filter(project=project)}
    out = {}
    for name, protocol in PROTOCOLS.items():
        row = rows.get(name)
        out[name] = {
            "base_url": row.base_url if row and row.base_url else None,
            "effective_base_url": (row.base_url if row and row.base_url else protocol.default_base_url),
            "api_key_set": _has_key(project, name),
            "api_key_env": row.api_key_env if row and row.api_key_env else None,
        }
    return out


def _check_base_url(value: Any, field: str) -> str:
    if not isinstance(value, str) or len(value) > 500:
        raise InvalidRequest(f"{field}: must be an http(s) URL of at most 500 characters.")
    refusal = base_url_refusal(value.strip())
    if refusal:
        raise InvalidRequest(f"{field}: {refusal}")
    return value.strip().rstrip("/")


def _check_env(name: str, *, provider: str, base_url: str) -> None:
    if not settings.THREADLESS_PROXY_ENV_KEYS:
        raise InvalidRequest(
            "api_key_env: this server does not lend its environment keys to the proxy "
            "(the operator turns that on with THREADLESS_PROXY_ENV_KEYS=1).",
            hint="Store your own upstream key (api_key) or send X-Upstream-Authorization.",
        )
    if name not in provider_env_names():
        raise InvalidRequest(f"api_key_env: '{name}' is not in THREADLESS_PROVIDER_ENV_ALLOW.")
    refusal = provider_env_refusal(name, provider=provider, base_url=base_url)
    if refusal:
        raise InvalidRequest(f"api_key_env: {refusal}")


def upstream_setting_set(
    *, project, provider: str, base_url: Any = _UNSET, api_key: Any = _UNSET, api_key_env: Any = _UNSET
) -> dict:
    """Set one provider's upstream: a field left out stays as it is, None clears it.

    A base URL the egress policy refuses is a 400 naming the allow-list value that would admit it.
    The stored key is bound to the base URL it was saved for: a change of the effective base URL
    removes it unless the same call supplies a key again (`api_key_cleared` in the answer says
    so), so whoever can change the base URL cannot send the stored key somewhere new.
    """
    protocol = _provider(provider)
    if base_url not in (_UNSET, None, ""):
        base_url = _check_base_url(base_url, "base_url")
        refusal = egress_refusal(base_url)  # the calls would all be refused: say so now
        if refusal:
            raise InvalidRequest(
                f"base_url: {refusal}",
                hint=EGRESS_HINT,
            )
    row, _ = UpstreamSetting.objects.get_or_create(project=project, provider=provider)
    before = row.base_url or protocol.default_base_url
    if base_url is not _UNSET:
        row.base_url = "" if base_url in (None, "") else base_url
    if api_key_env is not _UNSET:
        row.api_key_env = "" if api_key_env in (None, "") else str(api_key_env)
    if row.api_key_env and (api_key_env is not _UNSET or settings.THREADLESS_PROXY_ENV_KEYS):
        # checked against the base URL it would go to, at save and at call time
        _check_env(row.api_key_env, provider=provider, base_url=row.base_url or protocol.default_base_url)
    if api_key is not _UNSET and api_key not in (None, "") and not isinstance(api_key, str):
        raise InvalidRequest("api_key: must be a string.")
    moved = (row.base_url or protocol.default_base_url) != before
    cleared = False
    if api_key in (None, "") or (moved and api_key is _UNSET):
        cleared = moved and api_key is _UNSET and _has_key(project, provider)
        try:
            secret_delete(project=project, name=secret_name(provider))
        except NotFound:
            pass
    elif api_key is not _UNSET:
        secret_set(project=project, name=secret_name(provider), value=api_key)
    row.save()
    return {**upstream_settings(project=project)[provider], "api_key_cleared": cleared}


@dataclass(frozen=True)
class UpstreamRow:
    base_url: str
    api_key_env: str


_UPSTREAM_SQL = (
    f"SELECT base_url, api_key_env FROM {UpstreamSetting._meta.db_table} "
    "WHERE project_id = %s AND provider = %s"
)


def _upstream_row(*, project_id: str, provider: str) -> UpstreamRow | None:
    """The project's setting for a provider, read on every call: a plain query by the unique
    (project, provider) pair (the ORM's query compilation cost more than the read)."""
    with plain_cursor(prepare=True) as cursor:
        cursor.execute(_UPSTREAM_SQL, [project_id, provider])
        row = cursor.fetchone()
    return UpstreamRow(*row) if row is not None else None


@dataclass(frozen=True)
class Upstream:
    url: str
    headers: dict


def upstream_resolve(
    *, project, protocol: Protocol, base_url: str | None, authorization: str | None
) -> Upstream:
    """Where this call goes and with which key: the request's headers win over the project's
    settings; a key from the environment only goes where THREADLESS_PROVIDER_ENV_ALLOW pins it."""
    row = _upstream_row(project_id=project.pk, provider=protocol.name)
    configured = row.base_url if row and row.base_url else protocol.default_base_url
    base = _check_base_url(base_url, "X-Upstream-Base-Url") if base_url else configured
    if base == configured and base_url_refusal(configured):  # a setting saved before the rule
        raise InvalidRequest(
            f"base_url: {base_url_refusal(configured)}",
            hint="Set the project's proxy base URL again (PUT /v1/proxy/settings/{provider}).",
        )
    key = None
    if authorization:
        scheme, _, rest = authorization.strip().partition(" ")
        key = rest.strip() if scheme.lower() == "bearer" and rest.strip() else authorization.strip()
    elif base == configured:
        # The stored key goes only to the configured upstream: a request that names another base
        # URL brings its own key (a leaked project key cannot send the provider key elsewhere).
        try:
            key = secret_value(project_id=project.pk, name=secret_name(protocol.name))
        except LookupError:
            key = None
        if key is None and row and row.api_key_env and settings.THREADLESS_PROXY_ENV_KEYS:
            _check_env(row.api_key_env, provider=protocol.name, base_url=base)
            key = os.environ.get(row.api_key_env) or None
    headers = {}
    if key:
        headers = {"Authorization": f"Bearer {key}"} if protocol.name == "openai" else {"x-api-key": key}
    return Upstream(url=base + protocol.path, headers=headers)


# --- memory --------------------------------------------------------------------------------------


def proxy_memory(*, project, memory_id: str | None, external_id: str | None, user: str | None):
    """The memory a call names: X-Threadless-Memory, X-Threadless-External-Id (get-or-create), or
    the client's own end-user id (get-or-create); None when nothing names one."""
    if memory_id:
        return memory_get(project=project, memory_id=memory_id.strip())
    if external_id and external_id.strip():
        external = external_id_check(external_id.strip(), field="X-Threadless-External-Id")
    elif isinstance(user, str) and user.strip():
        # the client's end-user id (OpenAI `user`, Anthropic `metadata.user_id`): the same rules
        external = external_id_check(user.strip(), field="user")
    else:
        return None
    memory, _created = memory_create(project=project, external_id=external)
    return memory


def thread_of(raw: str | None) -> str | None:
    """X-Threadless-Thread: the thread of the named memory (SPEC 4.10; absent: its default one)."""
    if raw is None or not raw.strip():
        return None
    return external_id_check(raw.strip(), field="X-Threadless-Thread")


def budget_of(raw: str | None) -> int:
    if raw is None or raw == "":
        return 60000
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_BUDGET:
        raise InvalidRequest(f"X-Threadless-Budget: must be an integer from 1 to {MAX_BUDGET}.")
    return value


def _already_stored(memory, thread: str | None, messages: list[dict]) -> bool:
    """A client's retry of a call whose user message is already the thread's newest message."""
    users = [m for m in messages if m["role"] == "user"]
    if len(users) != 1 or messages[-1]["role"] != "user":
        return False
    newest = (
        Entry.objects.filter(memory=memory, thread=thread or DEFAULT_THREAD, kind="message", committed=True)
        .order_by("-seq")
        .values_list("role", "content", "parts")
        .first()
    )
    if newest is None or newest[0] != "user":
        return False
    content = users[0]["content"]
    return (newest[2] if newest[2] is not None else newest[1]) == content


def proxy_decorate(
    *,
    memory,
    project,
    protocol: Protocol,
    body: dict,
    budget_tokens: int,
    retry: bool = False,
    thread: str | None = None,
) -> dict:
    """decorate the request's new messages into the memory's thread (its system part = the
    instructions). A thread with no history yet takes the request's whole conversation.

    `retry`: the client's SDK says this is a retry (`x-stainless-retry-count` > 0) — when the
    first attempt already stored the user message, it is not stored a second time.
    """
    # The default thread's count is the memory row's own; a named thread's is its row's (one read).
    has_history = memory.message_count > 0 and thread_view(memory=memory, name=thread).message_count > 0
    messages = validate_messages(
        new_messages(protocol.messages_in(body), has_history=has_history), allow_empty=True
    )
    if retry and _already_stored(memory, thread, messages):
        messages = [m for m in messages if m["role"] == "system"]
    answer = memory_decorate(memory=memory, messages=messages, budget_tokens=budget_tokens, thread=thread)
    usage_count(project=project, operation="proxy")
    return answer


def proxy_report(
    *, memory, protocol: Protocol, reply: dict | None, error: str | None, thread: str | None = None
) -> dict | None:
    """Report the reply (and tool calls) durably, cut to what one report body could hold; an
    upstream failure as a reported failure of task `proxy.<provider>`, so the memory's policy
    decides what it leaves (digest, raw error…). A reply's reasoning items are stored with it only
    when the memory's policy keeps them (`reasoningItems: "keep"`); otherwise they are dropped here."""
    if reply and not policy_parse(memory.policy).keeps_reasoning:
        reply = without_reasoning(reply)
        if not reply.get("content") and not reply.get("tool_calls"):
            reply = None  # only reasoning (a reply cut before its text): nothing the model may see
    if reply:  # however much the upstream sent, no more is stored than a client could report itself
        reply = reply_cut(reply, limit=stored_reply_limit())
    messages = validate_messages([reply], allow_empty=True) if reply else []
    failures = (
        [{"task_id": f"proxy.{protocol.name}", "error": error[:100_000], "output": None, "has_output": False}]
        if error
        else []
    )
    if not messages and not failures:
        return None
    return report_accept(memory=memory, messages=messages, failures=failures, thread=thread)
