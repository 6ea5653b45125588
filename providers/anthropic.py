"""Anthropic Messages API (`POST {baseUrl}/v1/messages`)."""

from __future__ import annotations

from common.messages import text_of
from providers.base import ProviderError, loads, post_json, post_sse

DEFAULT_BASE_URL = "https://api.anthropic.com"
VERSION = "2023-06-01"


def _messages(messages: list[dict]) -> list[dict]:
    """Anthropic takes alternating user/assistant text turns: tool results become user text."""
    out: list[dict] = []
    for message in messages:
        role = "assistant" if message.get("role") == "assistant" else "user"
        text = text_of(message.get("content"))
        if not text:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"] += "\n\n" + text
        else:
            out.append({"role": role, "content": text})
    if out and out[0]["role"] != "user":
        out.insert(0, {"role": "user", "content": "(conversation continues)"})
    return out


def call(
    *, model, base_url, api_key, system, messages, params, timeout_ms, stream, on_token, should_stop
) -> str:
    base = (base_url or DEFAULT_BASE_URL).rstrip("/")
    url = base + ("/messages" if base.endswith("/v1") else "/v1/messages")
    headers = {"Content-Type": "application/json", "anthropic-version": VERSION}
    if api_key:
        headers["x-api-key"] = api_key
    payload = {"max_tokens": 1024, **params, "model": model, "messages": _messages(messages)}
    if system:
        payload["system"] = system
    if not stream:
        data = post_json(url, headers=headers, payload=payload, timeout_ms=timeout_ms)
        if data.get("type") == "error":
            error = data.get("error") or {}
            raise ProviderError(str(error.get("message") or "error"), raw=str(data)[:4000])
        return "".join(b.get("text", "") for b in data.get("content") or [] if b.get("type") == "text")
    payload["stream"] = True

    def handle(event: str, data: str) -> str | None:
        chunk = loads(data)
        kind = chunk.get("type") or event
        if kind == "error":
            error = chunk.get("error") or {}
            message = error.get("message") if isinstance(error, dict) else error
            error_type = (
                "rate_limit"
                if isinstance(error, dict) and error.get("type") == "rate_limit_error"
                else "provider"
            )
            raise ProviderError(str(message or "stream error"), error_type=error_type, raw=data[:4000])
        if kind == "content_block_delta":
            delta = chunk.get("delta") or {}
            return delta.get("text") or None
        return None

    return post_sse(
        url,
        headers=headers,
        payload=payload,
        timeout_ms=timeout_ms,
        handle=handle,
        on_token=on_token,
        should_stop=should_stop,
    )
