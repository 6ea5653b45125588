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
    out = []
    for i, message in enumerate(raw):
        where = f"{path}[{i}]"
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
        out.append(clean)
    return out


def text_of(content: Any) -> str:
    """The plain text of a content value (string, or the text parts of a list)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content
                         if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str))
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
