"""OpenAI-chat-shaped messages: validation (errors name the path) and entry-row conversion.

Hand-written rather than a DRF serializer on purpose: decorate and report sit on the hot path
and a serializer per message costs more than the whole window read.
"""

from __future__ import annotations

from typing import Any

from common.errors import InvalidRequest
from common.redaction import echo
from common.tokens import message_tokens

ROLES = {"user", "assistant", "tool", "system"}
MAX_MESSAGES = 2000
FIELDS = frozenset({"role", "content", "name", "tool_calls", "tool_call_id"})
# What OpenAI's SDK puts on an assistant message besides those (ChatCompletionMessage.model_dump()):
# accepted and ignored, so a reply can be handed back as it came. Any other field is still a 400.
OPENAI_ASSISTANT_EXTRAS = frozenset({"refusal", "annotations", "audio", "function_call"})


def _fail(path: str, message: str) -> None:
    raise InvalidRequest(f"{path}: {message}")


def validate_messages(raw: Any, *, path: str = "messages", allow_empty: bool = False) -> list[dict]:
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        _fail(path, "must be a list of messages.")
    if not raw and not allow_empty:
        _fail(path, "must contain at least one message.")
    if len(raw) > MAX_MESSAGES:
        _fail(path, f"at most {MAX_MESSAGES} messages per call.")
    return [validate_message(message, where=f"{path}[{i}]") for i, message in enumerate(raw)]


def validate_message(message: Any, *, where: str = "message") -> dict:
    """One message as `validate_messages` takes it (errors name `where`): the clean message."""
    if not isinstance(message, dict):
        _fail(where, "must be an object with 'role' and 'content'.")
    unknown = message.keys() - FIELDS
    if unknown and message.get("role") == "assistant":
        unknown -= OPENAI_ASSISTANT_EXTRAS
    if unknown:
        _fail(f"{where}.{echo(sorted(unknown)[0])}", "unknown field.")
    role = message.get("role")
    if role not in ROLES:
        _fail(f"{where}.role", "must be one of user, assistant, tool, system.")
    content = message.get("content")
    if content is None:
        content = ""
    if isinstance(content, list):
        for j, part in enumerate(content):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                _fail(f"{where}.content[{j}]", "must be an object with a 'type'.")
            if part["type"] == "text" and not isinstance(part.get("text"), str):
                _fail(f"{where}.content[{j}].text", "must be a string.")
    elif not isinstance(content, str):
        _fail(f"{where}.content", "must be a string or a list of parts.")
    clean: dict[str, Any] = {"role": role, "content": content}
    name = message.get("name")
    if name is not None:
        if not isinstance(name, str) or len(name) > 200:
            _fail(f"{where}.name", "must be a string of at most 200 characters.")
        clean["name"] = name
    tool_calls = message.get("tool_calls")
    if tool_calls is not None:
        if role != "assistant" or not isinstance(tool_calls, list):
            _fail(f"{where}.tool_calls", "must be a list, on an assistant message.")
        for j, call in enumerate(tool_calls):
            if not isinstance(call, dict):
                _fail(f"{where}.tool_calls[{j}]", "must be an object.")
        if tool_calls:
            clean["tool_calls"] = tool_calls
    tool_call_id = message.get("tool_call_id")
    if tool_call_id is not None:
        if not isinstance(tool_call_id, str) or len(tool_call_id) > 200:
            _fail(f"{where}.tool_call_id", "must be a string of at most 200 characters.")
        clean["tool_call_id"] = tool_call_id
    if role == "tool" and "tool_call_id" not in clean:
        _fail(f"{where}.tool_call_id", "is required on a tool message.")
    return clean


def text_of(content: Any) -> str:
    """The plain text of a content value (string, or the text parts of a list)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        )
    return ""


def entry_fields(message: dict) -> dict:
    """Entry model fields for one validated message."""
    content = message.get("content")
    fields = {
        "kind": "message",
        "role": message["role"],
        "content": content if isinstance(content, str) else text_of(content),
        "parts": content if isinstance(content, list) else None,
        "name": message.get("name", ""),
        "tool_calls": message.get("tool_calls"),
        "tool_call_id": message.get("tool_call_id", ""),
        "tokens": message_tokens(message),
    }
    return fields


# A stored message row as a message (the window read, selectors.memory_window).
def row_to_message(role: str, content: str, parts, name: str, tool_calls, tool_call_id: str) -> dict:
    message: dict[str, Any] = {"role": role, "content": parts if parts is not None else content}
    if name:
        message["name"] = name
    if tool_calls:
        message["tool_calls"] = tool_calls
    if tool_call_id:
        message["tool_call_id"] = tool_call_id
    return message


# --- a reply that came from an upstream -------------------------------------------------------


def stored_reply_limit() -> int:
    """Characters of a model's reply that are stored: no more than a client could report itself
    in one body (THREADLESS_MAX_BODY_BYTES), however much the upstream sent."""
    from django.conf import settings

    return settings.THREADLESS_MAX_BODY_BYTES


def cut_marker(limit: int) -> str:
    return f"[cut off: the reply was longer than {limit:,} characters]"


def text_cut(text: str, *, limit: int) -> str:
    """`text`, or its first `limit` characters and a marker line saying the rest was cut."""
    return text if len(text) <= limit else f"{text[:limit]}\n\n{cut_marker(limit)}"


def reply_cut(message: dict, *, limit: int) -> dict:
    """An assistant reply whose text and tool calls hold at most about `limit` characters.

    Past it the text is cut and ends with the marker line, and tool calls beyond the budget are
    dropped (their arguments cut): the stored entry says plainly that it is not the whole reply.
    """
    text = text_of(message.get("content"))
    calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
    arguments = [str((c.get("function") or {}).get("arguments") or "") for c in calls]
    if len(text) + sum(len(a) + 100 for a in arguments) <= limit and (
        isinstance(message.get("content"), str) or len(str(message.get("content"))) <= limit
    ):
        return message
    budget = limit
    kept_text = text[:budget]
    budget -= len(kept_text)
    kept_calls = []
    for call, args in zip(calls, arguments, strict=True):
        if budget <= 100:
            break
        fn = call.get("function") or {}
        cut = args[: budget - 100]
        budget -= len(cut) + 100
        kept_calls.append(
            {
                "id": str(call.get("id") or "")[:200],
                "type": "function",
                "function": {"name": str(fn.get("name") or "")[:200], "arguments": cut},
            }
        )
    out: dict[str, Any] = {
        "role": message.get("role", "assistant"),
        "content": f"{kept_text}\n\n{cut_marker(limit)}" if kept_text else cut_marker(limit),
    }
    if kept_calls:
        out["tool_calls"] = kept_calls
    return out
