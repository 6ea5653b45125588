"""What the client returns: memories, facts, entries, threads and the decorated request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["DecoratedRequest", "Entry", "Fact", "Memory", "Page", "Thread"]


@dataclass
class Memory:
    id: str
    external_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict[str, Any])
    instructions: str = ""
    policy: dict[str, Any] = field(default_factory=dict[str, Any])
    counts: dict[str, Any] = field(default_factory=dict[str, Any])
    processing: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    raw: dict[str, Any] = field(default_factory=dict[str, Any], repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Memory:
        return cls(
            id=data["id"],
            external_id=data.get("external_id"),
            metadata=data.get("metadata") or {},
            instructions=data.get("instructions") or "",
            policy=data.get("policy") or {},
            counts=data.get("counts") or {},
            processing=data.get("processing"),
            created_at=data.get("created_at"),
            updated_at=data.get("updated_at"),
            raw=data,
        )


@dataclass
class Fact:
    id: str
    text: str
    slot: str | None = None
    source_entry_ids: list[Any] = field(default_factory=list[Any])
    created_at: str | None = None
    updated_at: str | None = None
    valid_from: str | None = None  # when the message it was learned from was said (None: a person wrote it)
    valid_to: str | None = None  # when a later message superseded it (None while it holds)
    raw: dict[str, Any] = field(default_factory=dict[str, Any], repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Fact:
        return cls(
            id=data["id"],
            text=data.get("text") or "",
            slot=data.get("slot"),
            source_entry_ids=data.get("source_entry_ids") or [],
            created_at=data.get("created_at"),
            updated_at=data.get("updated_at"),
            valid_from=data.get("valid_from"),
            valid_to=data.get("valid_to"),
            raw=data,
        )


@dataclass
class Entry:
    id: str
    seq: int
    turn: int
    kind: str
    role: str | None = None
    content: Any = None
    task_id: str | None = None
    committed: bool = True
    tokens: int = 0
    created_at: str | None = None
    thread: str = "default"
    raw: dict[str, Any] = field(default_factory=dict[str, Any], repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Entry:
        return cls(
            id=data["id"],
            seq=data.get("seq", 0),
            turn=data.get("turn", 0),
            kind=data.get("kind", ""),
            role=data.get("role"),
            content=data.get("content"),
            task_id=data.get("task_id"),
            committed=data.get("committed", True),
            tokens=data.get("tokens", 0),
            created_at=data.get("created_at"),
            thread=data.get("thread") or "default",
            raw=data,
        )


@dataclass
class Thread:
    """One conversation of a memory's subject: ``id`` is the thread's own id ("default" for the
    memory's own), ``updated_at`` when its newest entry was said, ``messages`` its committed
    messages and ``tokens`` their estimate."""

    id: str
    created_at: str | None = None
    updated_at: str | None = None
    turns: int = 0
    messages: int = 0
    tokens: int = 0
    raw: dict[str, Any] = field(default_factory=dict[str, Any], repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Thread:
        return cls(
            id=data["id"],
            created_at=data.get("created_at"),
            updated_at=data.get("updated_at"),
            turns=data.get("turns", 0),
            messages=data.get("messages", 0),
            tokens=data.get("tokens", 0),
            raw=data,
        )


@dataclass
class Page:
    """One page of a list endpoint: ``data`` and the ``next_cursor`` to pass for the next page."""

    data: list[Any]
    next_cursor: str | None = None

    def __iter__(self) -> Iterator[Any]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


@dataclass
class DecoratedRequest:
    """The full model request decorate built.

    ``instructions`` is your instructions followed by the context blocks (facts, recall,
    failures); ``messages`` the newest history that fits plus your new messages. ``degraded`` is
    True when the service could not answer and the request was built from the local tail; then
    ``error`` says why, ``turn`` is None and ``context``/``usage`` are empty.
    """

    memory_id: str | None  # None only for a fallback by external_id before any successful decorate
    instructions: str
    messages: list[Any]
    context_text: str = ""
    turn: int | None = None
    context: dict[str, Any] = field(default_factory=dict[str, Any])
    usage: dict[str, Any] = field(default_factory=dict[str, Any])
    degraded: bool = False
    error: Exception | None = field(default=None, repr=False)
    external_id: str | None = None
    thread: str | None = None  # as passed to decorate (None: the memory's default thread)

    def to_openai(self) -> list[dict[str, Any]]:
        """Messages for OpenAI's chat completions: the instructions as a system message first."""
        out = [{"role": "system", "content": self.instructions}] if self.instructions else []
        out.extend(self.messages)
        return out

    def to_anthropic(self) -> dict[str, Any]:
        """``{"system": str, "messages": [...]}`` for Anthropic's Messages API (``**req.to_anthropic()``).

        Tool calls become ``tool_use`` blocks, tool results ``tool_result`` blocks in a user
        message, image parts ``image`` blocks; consecutive messages of one role are merged, since
        Anthropic wants user and assistant to alternate.
        """
        system = [self.instructions] if self.instructions else []
        messages: list[dict[str, Any]] = []
        for message in self.messages:
            role = message.get("role")
            if role == "system":
                text = _text_of(message.get("content"))
                if text:
                    system.append(text)
                continue
            if role == "tool":
                result: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": message.get("tool_call_id") or "",
                    "content": _text_of(message.get("content")),
                }
                _append(messages, "user", [result])
                continue
            blocks = _blocks(message.get("content"))
            if role == "assistant":
                for call in message.get("tool_calls") or ():
                    function = call.get("function") or {}
                    blocks.append(
                        {
                            "type": "tool_use",
                            "id": call.get("id") or "",
                            "name": function.get("name") or "",
                            "input": _arguments(function.get("arguments")),
                        }
                    )
                _append(messages, "assistant", blocks)
            else:
                _append(messages, "user", blocks)
        return {"system": "\n\n".join(system), "messages": messages}


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text") or "") if isinstance(p, dict) else str(p)
            for p in content
            if not isinstance(p, dict) or p.get("type") == "text"
        )
    return str(content)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for part in content if isinstance(content, list) else [content]:
        if isinstance(part, str):
            blocks.append({"type": "text", "text": part})
        elif not isinstance(part, dict):
            blocks.append({"type": "text", "text": str(part)})
        elif part.get("type") == "text":
            if part.get("text"):
                blocks.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "image_url":
            url = part.get("image_url")
            url = url.get("url") if isinstance(url, dict) else url
            blocks.append({"type": "image", "source": _image_source(str(url or ""))})
        else:
            blocks.append(part)  # already an Anthropic block (or something only the caller understands)
    return blocks


def _image_source(url: str) -> dict[str, Any]:
    if url.startswith("data:") and ";base64," in url:
        media_type, data = url[5:].split(";base64,", 1)
        return {"type": "base64", "media_type": media_type, "data": data}
    return {"type": "url", "url": url}


def _arguments(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return {"arguments": arguments}
        return value if isinstance(value, dict) else {"value": value}
    return arguments if isinstance(arguments, dict) else {}


def _append(messages: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if not blocks:
        return
    if messages and messages[-1]["role"] == role:
        messages[-1]["content"].extend(blocks)
    else:
        messages.append({"role": role, "content": blocks})
