"""Provider answers as report messages: OpenAI's chat completion and Anthropic's message, as they are.

No provider package is imported: the objects are read through ``model_dump()`` (both SDKs' types
are pydantic models) or as the dicts they serialise to.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ._errors import ThreadlessError

__all__ = ["from_anthropic", "from_openai"]


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json", exclude_none=True)
    return value


def _bad(what: str, value: Any) -> ThreadlessError:
    return ThreadlessError(
        f"{what}: cannot read a {type(value).__name__} as one.", code="invalid_request", retryable=False
    )


def from_openai(completion: Any) -> list[dict[str, Any]]:
    """The assistant message of a ``ChatCompletion`` (first choice) or a ``ChatCompletionMessage``.

    Keeps role, content, tool_calls and name; OpenAI's other fields (``refusal``, ``annotations``,
    ``audio``, ``function_call``) are dropped, except that a refusal with no content becomes the
    content (it is what the user was shown).
    """
    data = _plain(completion)
    if isinstance(data, Mapping) and "choices" in data:
        choices = data.get("choices") or []
        if not choices:
            raise ThreadlessError("completion: has no choices.", code="invalid_request", retryable=False)
        data = _plain(choices[0])
        data = _plain(data.get("message")) if isinstance(data, Mapping) else data
    if not isinstance(data, Mapping):
        raise _bad("completion (a ChatCompletion or its message)", completion)
    content = data.get("content")
    if content is None or content == "":
        content = data.get("refusal") or ""
    message: dict[str, Any] = {"role": data.get("role") or "assistant", "content": content}
    tool_calls = [_plain(c) for c in data.get("tool_calls") or []]
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": c.get("id"),
                "type": c.get("type") or "function",
                "function": {
                    "name": (c.get("function") or {}).get("name"),
                    "arguments": (c.get("function") or {}).get("arguments") or "",
                },
            }
            for c in tool_calls
            if isinstance(c, Mapping)
        ]
    if isinstance(data.get("name"), str):
        message["name"] = data["name"]
    return [message]


def from_anthropic(message: Any) -> list[dict[str, Any]]:
    """An Anthropic ``Message`` (or its dict): text blocks joined as the content, ``tool_use``
    blocks as OpenAI-shaped tool calls (arguments as compact JSON); thinking and other blocks are
    left out."""
    data = _plain(message)
    if not isinstance(data, Mapping) or "content" not in data:
        raise _bad("message (an Anthropic Message)", message)
    blocks = data.get("content")
    if isinstance(blocks, str):
        blocks = [{"type": "text", "text": blocks}]
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in blocks or []:
        block = _plain(block)
        if not isinstance(block, Mapping):
            continue
        if block.get("type") == "text":
            texts.append(str(block.get("text") or ""))
        elif block.get("type") == "tool_use":
            arguments = json.dumps(block.get("input") or {}, ensure_ascii=False, separators=(",", ":"))
            calls.append(
                {
                    "id": block.get("id"),
                    "type": "function",
                    "function": {"name": block.get("name"), "arguments": arguments},
                }
            )
    out: dict[str, Any] = {"role": "assistant", "content": "".join(texts)}
    if calls:
        out["tool_calls"] = calls
    return [out]
