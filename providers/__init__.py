"""Model providers: `openai` (any OpenAI-compatible endpoint), `anthropic` and the offline `demo`.

One entry point for the pipeline's llm task and anyone else who needs a model call:

    call(*, provider, model, base_url, api_key, system, messages, params,
         timeout_ms=60000, stream=False, on_token=None, should_stop=None) -> str

and, for background work (fact extraction, compaction), the plain non-streaming form:

    complete(*, provider: str, model: str, base_url: str | None, api_key: str | None,
             messages: list[dict], params: dict | None = None, timeout_ms: int = 60000) -> str

`messages` are OpenAI-chat shaped; `system` messages among them are joined into the system
prompt. Both raise `ProviderError` (`.reason`, `.error_type`, `.raw`) for every failure — HTTP
status, timeout, refused connection, egress refusal — never an httpx exception. Outbound URLs
pass the egress policy (providers.egress). Nothing here reads keys from config or the database: the
caller resolves `api_key` (see memories.provider_keys.provider_api_key).
"""

from __future__ import annotations

from collections.abc import Callable

from common.messages import text_of
from providers import anthropic, demo, openai
from providers.base import Interrupted, ProviderError

__all__ = ["call", "complete", "ProviderError", "Interrupted", "PROVIDERS"]

PROVIDERS = {"openai": openai, "anthropic": anthropic, "demo": demo}


def call(
    *,
    provider: str,
    model: str | None,
    base_url: str | None,
    api_key: str | None,
    system: str,
    messages: list[dict],
    params: dict | None = None,
    timeout_ms: int = 60_000,
    stream: bool = False,
    on_token: Callable[[str], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> str:
    module = PROVIDERS.get(provider)
    if module is None:
        raise ProviderError(f"unknown provider '{provider}'", error_type="unknown")
    return module.call(
        model=model or "",
        base_url=base_url,
        api_key=api_key,
        system=system,
        messages=messages,
        params=dict(params or {}),
        timeout_ms=timeout_ms,
        stream=stream,
        on_token=on_token or (lambda _t: None),
        should_stop=should_stop or (lambda: False),
    )


def complete(
    *,
    provider: str,
    model: str,
    base_url: str | None,
    api_key: str | None,
    messages: list[dict],
    params: dict | None = None,
    timeout_ms: int = 60_000,
) -> str:
    """One non-streaming completion; the reply text. Raises ProviderError."""
    system = "\n\n".join(text_of(m.get("content")) for m in messages if m.get("role") == "system")
    rest = [m for m in messages if m.get("role") != "system"]
    return call(
        provider=provider,
        model=model,
        base_url=base_url,
        api_key=api_key,
        system=system,
        messages=rest,
        params=params,
        timeout_ms=timeout_ms,
        stream=False,
    )
