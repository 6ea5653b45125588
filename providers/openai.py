"""OpenAI-compatible chat completions (OpenAI, Ollama, vLLM, llama.cpp, …)."""

from __future__ import annotations

from providers.base import ProviderError, loads, post_json, post_sse

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def _request(
    model: str,
    base_url: str | None,
    api_key: str | None,
    system: str,
    messages: list[dict],
    params: dict,
    stream: bool,
) -> tuple[str, dict, dict]:
    url = (base_url or DEFAULT_BASE_URL).rstrip("/") + "/chat/completions"
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    chat = ([{"role": "system", "content": system}] if system else []) + messages
    payload = {**params, "model": model, "messages": chat}
    if stream:
        payload["stream"] = True
    return url, headers, payload


def call(
    *, model, base_url, api_key, system, messages, params, timeout_ms, stream, on_token, should_stop
) -> str:
    url, headers, payload = _request(model, base_url, api_key, system, messages, params, stream)
    if not stream:
        data = post_json(url, headers=headers, payload=payload, timeout_ms=timeout_ms)
        if isinstance(data.get("error"), dict):
            raise ProviderError(str(data["error"].get("message") or "error"), raw=str(data)[:4000])
        try:
            choice = data["choices"][0]
            content = choice["message"].get("content") or ""
        except (KeyError, IndexError, TypeError, AttributeError):
            raise ProviderError("the response had no choices", raw=str(data)[:4000]) from None
        if choice.get("finish_reason") == "content_filter" and not content:
            raise ProviderError("the reply was blocked by the content filter", error_type="content_filter")
        return content

    def handle(event: str, data: str) -> str | None:
        if data.strip() == "[DONE]":
            return None
        chunk = loads(data)
        if isinstance(chunk.get("error"), (dict, str)):
            error = chunk["error"]
            message = error.get("message") if isinstance(error, dict) else error
            raise ProviderError(str(message or "stream error"), raw=data[:4000])
        choices = chunk.get("choices") or []
        if not choices:
            return None
        if choices[0].get("finish_reason") == "content_filter":
            raise ProviderError("the reply was blocked by the content filter", error_type="content_filter")
        delta = choices[0].get("delta") or {}
        return delta.get("content") or None

    return post_sse(
        url,
        headers=headers,
        payload=payload,
        timeout_ms=timeout_ms,
        handle=handle,
        on_token=on_token,
        should_stop=should_stop,
    )
