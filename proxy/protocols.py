"""The two provider protocols the proxy speaks: OpenAI Chat Completions and Anthropic Messages.

Pure translation, no I/O and no Django: a request's messages into the memory's OpenAI-chat
shaped messages (and back, for the upstream call), a response or a stream of SSE frames into
the assistant message to report, and the provider's own error body for a failure Threadless
makes (the upstream could not be reached). Everything the client sends that is not messages
(model, tools, temperature, stream_options, …) is forwarded untouched.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from common.messages import text_of

CUT_OFF_CLIENT = "[cut off: the client disconnected]"
CUT_OFF_UPSTREAM = "[cut off: the upstream stream ended early]"


def cut_off(message: dict | None, marker: str) -> dict | None:
    """The part of a reply received so far, marked as cut off (a trailing line in its text).

    The marker is part of the stored content on purpose: the model sees next time that its
    previous reply was interrupted, and staff see it in the timeline.
    """
    if message is None:
        return None
    content = message.get("content") or ""
    if isinstance(content, list):  # a reply kept with its reasoning parts: the marker ends its text
        last = content[-1] if content else None
        if last is not None and last.get("type") == "text" and last.get("text"):
            return {
                **message,
                "content": [*content[:-1], {"type": "text", "text": f"{last['text']}\n\n{marker}"}],
            }
        return {**message, "content": [*content, {"type": "text", "text": marker}]}
    return {**message, "content": f"{content}\n\n{marker}" if content else marker}


def without_reasoning(message: dict) -> dict:
    """An assistant message without the reasoning items a Responses reply may carry as parts (the
    memory keeps them only when its policy says so; Chat Completions and Messages have no place
    for them). Parts that were all text become the plain text again."""
    content = message.get("content")
    if not isinstance(content, list) or not any(
        isinstance(p, dict) and p.get("type") == "reasoning" for p in content
    ):
        return message
    parts = [p for p in content if not (isinstance(p, dict) and p.get("type") == "reasoning")]
    if all(p.get("type") == "text" for p in parts):
        return {**message, "content": "".join(p.get("text") or "" for p in parts)}
    return {**message, "content": parts}


# --- shared ------------------------------------------------------------------------------------


def _parts(content: Any) -> str | list:
    """A content value as the memory stores it: plain text when every part is text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return str(content)
    parts = [
        p
        for p in content
        if isinstance(p, dict)
        and isinstance(p.get("type"), str)
        and (p["type"] != "text" or isinstance(p.get("text"), str))
    ]
    if all(p["type"] == "text" for p in parts):
        return "\n".join(p["text"] for p in parts)
    return parts


def new_messages(messages: list[dict], *, has_history: bool) -> list[dict]:
    """What the memory has not seen: system messages, then the messages after the request's last
    assistant message (clients resend the whole conversation; the memory keeps it). A memory with
    no history yet takes the whole conversation."""
    systems = [m for m in messages if m["role"] == "system"]
    rest = [m for m in messages if m["role"] != "system"]
    if has_history:
        last = max((i for i, m in enumerate(rest) if m["role"] == "assistant"), default=-1)
        rest = rest[last + 1 :]
    return systems + rest


def _tool_call(call: Any) -> dict | None:
    if not isinstance(call, dict):
        return None
    fn = call.get("function") if isinstance(call.get("function"), dict) else {}
    args = fn.get("arguments", "")
    return {
        "id": str(call.get("id") or ""),
        "type": "function",
        "function": {
            "name": str(fn.get("name") or ""),
            "arguments": args if isinstance(args, str) else json.dumps(args),
        },
    }


def stream_index(value: Any) -> int:
    """A stream event's `index`; anything but a small non-negative integer counts as 0."""
    return value if isinstance(value, int) and 0 <= value < 1024 else 0


def frame_with_object_rewritten(frame: bytes, key: str, rewrite: Callable[[dict], dict]) -> bytes:
    """An SSE frame whose `data:` payload's `key` object has gone through `rewrite`; a frame without
    one, or whose data is not JSON, comes back as it was."""
    lines = frame.split(b"\n")
    for i, line in enumerate(lines):
        if line.startswith(b"data:"):
            try:
                payload = orjson.loads(line[5:])
            except orjson.JSONDecodeError:
                return frame
            if isinstance(payload, dict) and isinstance(payload.get(key), dict):
                payload[key] = rewrite(payload[key])
                lines[i] = b"data: " + orjson.dumps(payload)
    return b"\n".join(lines)


# --- OpenAI Chat Completions ---------------------------------------------------------------------


def openai_messages(raw: Any) -> list[dict]:
    """An OpenAI request's messages as memory messages (developer = system; unknown fields dropped)."""
    out: list[dict] = []
    for m in raw if isinstance(raw, list) else []:
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        if role in ("system", "developer"):
            out.append({"role": "system", "content": text_of(m.get("content"))})
        elif role == "user":
            out.append({"role": "user", "content": _parts(m.get("content"))})
        elif role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": _parts(m.get("content"))}
            calls = [c for c in (_tool_call(c) for c in m.get("tool_calls") or []) if c]
            if calls:
                msg["tool_calls"] = calls
            out.append(msg)
        elif role in ("tool", "function"):
            out.append(
                {
                    "role": "tool",
                    "content": text_of(m.get("content"))
                    if not isinstance(m.get("content"), str)
                    else m["content"],
                    "tool_call_id": str(m.get("tool_call_id") or m.get("name") or ""),
                }
            )
        else:
            continue
        if isinstance(m.get("name"), str) and role in ("user", "assistant"):
            out[-1]["name"] = m["name"][:200]
    return out


def openai_body(body: dict, *, instructions: str, messages: list[dict]) -> dict:
    """The upstream request: the client's body with the decorated instructions and messages."""
    role = (
        "developer"
        if any(isinstance(m, dict) and m.get("role") == "developer" for m in body.get("messages") or [])
        else "system"
    )
    chat = ([{"role": role, "content": instructions}] if instructions else []) + [
        m if m["role"] != "assistant" else _openai_assistant(m) for m in messages
    ]
    return {**body, "messages": chat}


def _openai_assistant(message: dict) -> dict:
    """An assistant message of the window as OpenAI takes it (the window's other messages are in
    its form already, and go as they are: a window is up to a thousand messages per call)."""
    if isinstance(message.get("content"), list):
        message = without_reasoning(message)
    if message.get("tool_calls") and not message.get("content"):
        return {**message, "content": None}  # OpenAI's form of a tool-call-only turn
    return message


def openai_reply(data: Any) -> dict | None:
    """The assistant message of a (non-streaming) chat completion."""
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return None
    out: dict[str, Any] = {"role": "assistant", "content": _parts(message.get("content"))}
    calls = [c for c in (_tool_call(c) for c in message.get("tool_calls") or []) if c]
    if calls:
        out["tool_calls"] = calls
    return out


def openai_error_body(
    message: str, *, kind: str = "upstream_error", code: str = "upstream_unreachable"
) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


@dataclass
class OpenAIStream:
    """Accumulates `chat.completion.chunk` events into the assistant message."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, dict] = field(default_factory=dict)
    error: str | None = None
    done: bool = False

    def feed(self, event: str, data: str) -> None:
        if data.strip() == "[DONE]":
            self.done = True
            return
        try:
            chunk = json.loads(data)
        except ValueError:
            return
        if not isinstance(chunk, dict):
            return
        if chunk.get("error"):
            error = chunk["error"]
            self.error = str(error.get("message") if isinstance(error, dict) else error)
            return
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                continue
            if isinstance(delta.get("content"), str):
                self.text.append(delta["content"])
            for call in delta.get("tool_calls") or []:
                if not isinstance(call, dict):
                    continue
                # pieces are joined once, in message(): appending to a string per event is quadratic
                slot = self.calls.setdefault(
                    stream_index(call.get("index")), {"id": "", "name": [], "arguments": []}
                )
                if call.get("id"):
                    slot["id"] = call["id"]
                fn = call.get("function") or {}
                slot["name"].append(str(fn.get("name") or ""))
                slot["arguments"].append(str(fn.get("arguments") or ""))

    def message(self) -> dict | None:
        if not self.text and not self.calls:
            return None
        out: dict[str, Any] = {"role": "assistant", "content": "".join(self.text)}
        if self.calls:
            out["tool_calls"] = [
                {
                    "id": self.calls[i]["id"],
                    "type": "function",
                    "function": {
                        "name": "".join(self.calls[i]["name"]),
                        "arguments": "".join(self.calls[i]["arguments"]),
                    },
                }
                for i in sorted(self.calls)
            ]
        return out


# --- Anthropic Messages ------------------------------------------------------------------------


def anthropic_messages(body: dict) -> list[dict]:
    """An Anthropic request (system + messages with content blocks) as memory messages.

    tool_result blocks become `tool` messages; tool_use blocks become OpenAI-style tool_calls.
    """
    out: list[dict] = []
    system = body.get("system")
    if system:
        out.append({"role": "system", "content": text_of(system)})
    for m in body.get("messages") if isinstance(body.get("messages"), list) else []:
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            continue
        content = m.get("content")
        if isinstance(content, str):
            out.append({"role": m["role"], "content": content})
            continue
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        if m["role"] == "user":
            for b in blocks:
                if b.get("type") == "tool_result":
                    out.append(
                        {
                            "role": "tool",
                            "tool_call_id": str(b.get("tool_use_id") or ""),
                            "content": text_of(b.get("content"))
                            if not isinstance(b.get("content"), str)
                            else b["content"],
                        }
                    )
            rest = [b for b in blocks if b.get("type") not in ("tool_result",)]
            if rest:
                out.append({"role": "user", "content": _parts(rest)})
        else:
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            msg: dict[str, Any] = {"role": "assistant", "content": text}
            calls = [
                {
                    "id": str(b.get("id") or ""),
                    "type": "function",
                    "function": {
                        "name": str(b.get("name") or ""),
                        "arguments": json.dumps(b.get("input") or {}),
                    },
                }
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            if calls:
                msg["tool_calls"] = calls
            out.append(msg)
    return out


def _anthropic_blocks(message: dict) -> list[dict]:
    content = message.get("content")
    role = message["role"]
    if role == "tool":
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.get("tool_call_id", ""),
                "content": text_of(content) if not isinstance(content, str) else content,
            }
        ]
    blocks: list[dict] = []
    if isinstance(content, str):
        if content:
            blocks.append({"type": "text", "text": content})
    elif isinstance(content, list):
        for part in content:
            if part.get("type") == "text":
                if part.get("text"):
                    blocks.append({"type": "text", "text": part["text"]})
            elif part.get("type") in ("image", "document"):
                blocks.append(part)
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        try:
            args = json.loads(fn.get("arguments") or "{}")
        except ValueError:
            args = {}
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id", ""),
                "name": fn.get("name", ""),
                "input": args if isinstance(args, dict) else {},
            }
        )
    return blocks


def anthropic_body(body: dict, *, instructions: str, messages: list[dict]) -> dict:
    """The upstream request: decorated instructions as `system`, the window as Anthropic messages
    (tool results folded into user turns, consecutive same-role messages merged)."""
    out: list[dict] = []
    for message in messages:
        role = "user" if message["role"] in ("user", "tool") else "assistant"
        blocks = _anthropic_blocks(message)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    for item in out:  # plain text turns go as strings, the form clients send most
        if len(item["content"]) == 1 and item["content"][0]["type"] == "text":
            item["content"] = item["content"][0]["text"]
    upstream = {**body, "messages": out}
    if instructions:
        upstream["system"] = instructions
    else:
        upstream.pop("system", None)
    return upstream


def anthropic_reply(data: Any) -> dict | None:
    if not isinstance(data, dict) or not isinstance(data.get("content"), list):
        return None
    return anthropic_messages({"messages": [{"role": "assistant", "content": data["content"]}]})[0]


def anthropic_error_body(message: str, *, kind: str = "api_error") -> dict:
    return {"type": "error", "error": {"type": kind, "message": message}}


@dataclass
class AnthropicStream:
    """Accumulates Messages API stream events (content blocks of text and tool_use)."""

    blocks: dict[int, dict] = field(default_factory=dict)
    error: str | None = None
    done: bool = False

    def feed(self, event: str, data: str) -> None:
        try:
            payload = json.loads(data)
        except ValueError:
            return
        if not isinstance(payload, dict):
            return
        kind = payload.get("type") or event
        if kind == "message_stop":
            self.done = True
        elif kind == "error":
            error = payload.get("error") or {}
            self.error = str(error.get("message") if isinstance(error, dict) else error)
        elif kind == "content_block_start":
            start = payload.get("content_block")
            block = dict(start) if isinstance(start, dict) else {"type": "text"}
            # deltas are kept as pieces and joined once, in message(): a string grown per event is quadratic
            block["_pieces"] = [block["text"]] if isinstance(block.get("text"), str) else []
            self.blocks[stream_index(payload.get("index"))] = block
        elif kind == "content_block_delta":
            block = self.blocks.setdefault(
                stream_index(payload.get("index")), {"type": "text", "_pieces": []}
            )
            delta = payload.get("delta")
            if not isinstance(delta, dict):
                return
            if delta.get("type") == "text_delta":
                block["_pieces"].append(str(delta.get("text") or ""))
            elif delta.get("type") == "input_json_delta":
                block["_pieces"].append(str(delta.get("partial_json") or ""))

    def message(self) -> dict | None:
        blocks = []
        for i in sorted(self.blocks):
            block = dict(self.blocks[i])
            joined = "".join(block.pop("_pieces", []))
            if block.get("type") == "text":
                block["text"] = joined
            if block.get("type") == "tool_use":
                raw = joined
                try:
                    block["input"] = json.loads(raw) if raw else (block.get("input") or {})
                except ValueError:
                    block["input"] = {}
            blocks.append(block)
        if not any(b.get("type") == "tool_use" or b.get("text") for b in blocks):
            return None
        return anthropic_reply({"content": blocks})


@dataclass(frozen=True)
class Reference:
    """A memory and thread a request's body names (a previous response or message this proxy issued,
    a conversation), with the fields a server-side thread was created with that the request leaves
    out (`restored`: they go upstream unless the request sets them)."""

    memory: Any
    thread: str | None
    restored: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Protocol:
    """What differs between the two routes."""

    name: str  # the provider; also the reported failure's task id `proxy.<name>`
    default_base_url: str
    path: str  # appended to the upstream base URL
    official_host: str

    def messages_in(self, body: dict) -> list[dict]:
        return openai_messages(body.get("messages")) if self.name == "openai" else anthropic_messages(body)

    def upstream_body(self, body: dict, *, instructions: str, messages: list[dict]) -> dict:
        build = openai_body if self.name == "openai" else anthropic_body
        return build(body, instructions=instructions, messages=messages)

    def reply(self, data: Any) -> dict | None:
        return openai_reply(data) if self.name == "openai" else anthropic_reply(data)

    def stream(self) -> OpenAIStream | AnthropicStream:
        return OpenAIStream() if self.name == "openai" else AnthropicStream()

    def error_body(self, message: str, *, status: int) -> dict:
        """A failure Threadless answers for the upstream: 502 unreachable or unreadable, 503 busy
        (retry after a moment), 504 timed out."""
        if self.name == "openai":
            code = {503: "upstream_busy", 504: "upstream_timeout"}.get(status, "upstream_unreachable")
            return openai_error_body(message, code=code)
        return anthropic_error_body(
            message, kind={503: "overloaded_error", 504: "timeout_error"}.get(status, "api_error")
        )

    def user_of(self, body: dict) -> str | None:
        """The client's own end-user id: OpenAI's `user` (or `safety_identifier`), Anthropic's
        `metadata.user_id`."""
        if self.name == "openai":
            value = body.get("user") or body.get("safety_identifier")
        else:
            value = (
                (body.get("metadata") or {}).get("user_id")
                if isinstance(body.get("metadata"), dict)
                else None
            )
        return value if isinstance(value, str) and value.strip() else None

    # Hooks a route's protocol may add to the shared call (the Responses route does: proxy.responses).

    def forwardable(self, body: dict) -> dict:
        """The caller's body as it may go upstream when the memory adds nothing."""
        return body

    def referenced(self, *, project, body: dict, memory_named: bool) -> Reference | None:
        """What the body itself names (besides the headers and the end-user id); `memory_named`:
        whether the headers or the end-user id name a memory."""
        return None

    def hold(self, *, memory, thread: str | None, body: dict) -> None:
        """Keep what the body asks the server to hold for later calls (a call with memory)."""

    def issues_ids(self, body: dict) -> bool:
        """Whether the answer's ids are rewritten into ids that name the call's memory and thread."""
        return False

    def conversation_of(self, body: dict) -> str | None:
        return None

    def answer_json(self, raw: bytes, call) -> bytes:
        """The upstream's JSON answer as the client gets it."""
        return raw

    def answer_frame(self, frame: bytes, call) -> bytes:
        """One upstream SSE frame (without its blank line) as the client gets it."""
        return frame


OPENAI = Protocol("openai", "https://api.openai.com/v1", "/chat/completions", "api.openai.com")
ANTHROPIC = Protocol("anthropic", "https://api.anthropic.com", "/v1/messages", "api.anthropic.com")
PROTOCOLS = {"openai": OPENAI, "anthropic": ANTHROPIC}
