"""OpenAI's Conversations API backed by memories (SPEC 4.8, 4.10): the work of its routes.

A conversation **is** one thread of a Threadless memory. Created plainly, it is a new memory's
default thread and its id is the memory's id (OpenAI's `conv_` spelling of it is accepted); created
with `X-Threadless-Memory` or `X-Threadless-External-Id`, it is a new thread of that memory (named
by `X-Threadless-Thread`, else a fresh name) and its id names both (proxy.ids). Its `metadata` is
the memory's (set on a thread's conversation: a 400, as it would change every thread's), and its
items are the thread's committed messages, one item per message, an assistant message with tool
calls one item per call besides its text. Item ids carry the message's sequence number (`msg_12`,
`fc_12_0`, `fco_13`), so they stay stable and list in the memory's order. Items added here are
stored like a report (durably, with the background work that extracts facts); deleting an item
takes its message out of the memory (uncommitted: out of the window, lists, search and recall);
deleting a memory's default conversation deletes the memory, a thread's deletes that thread, each
answering its deletion receipt.

Services and selectors only, in OpenAI's item shapes; the HTTP side (bodies, query parameters,
the answers' envelopes) is `proxy.openai_api`.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from typing import Any

from common.errors import InvalidRequest, NotFound
from common.messages import validate_messages
from memories.models import DEFAULT_THREAD, Entry, Memory, Thread
from memories.selectors import memory_get, thread_get
from memories.services import (
    entries_set_committed,
    memory_create,
    memory_delete,
    memory_update,
    report_accept,
    thread_delete,
    thread_open,
)
from proxy.ids import conversation_id, conversation_target
from proxy.responses import REASONING, items_to_messages, part_out

ITEM_ID = re.compile(r"\A(?:(msg|fco)_(\d{1,18})|(fc|rs)_(\d{1,18})_(\d{1,4}))\Z")
MAX_NEW_ITEMS = 20  # OpenAI's limit per create call
METADATA_PAIRS, METADATA_KEY, METADATA_VALUE = 16, 64, 512
ENTRY_FIELDS = ("seq", "role", "content", "parts", "tool_calls", "tool_call_id")


# --- shapes ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Conversation:
    memory: Memory
    thread: Thread | None  # None: the memory's default thread

    @property
    def thread_name(self) -> str:
        return DEFAULT_THREAD if self.thread is None else self.thread.name

    @property
    def id(self) -> str:
        return conversation_id(self.memory.id, None if self.thread is None else self.thread.name)


def conversation_json(conversation: Conversation) -> dict:
    memory = conversation.memory
    created = (conversation.thread or memory).created_at
    return {
        "id": conversation.id,
        "object": "conversation",
        "created_at": int(created.timestamp()),
        "metadata": {k: v for k, v in (memory.metadata or {}).items() if isinstance(v, str)},
    }


def entry_items(seq: int, role: str, content: str, parts, tool_calls, tool_call_id: str) -> list[dict]:
    """One stored message as conversation items."""
    if role == "tool":
        return [
            {
                "type": "function_call_output",
                "id": f"fco_{seq}",
                "call_id": tool_call_id,
                "output": content,
                "status": "completed",
            }
        ]
    if role not in ("user", "assistant"):
        return []
    items: list[dict] = []
    reasoning = [p for p in parts or [] if isinstance(p, dict) and p.get("type") == REASONING]
    if reasoning:  # kept by the memory's policy: items of their own, ahead of the message they led to
        items += [{**item, "id": f"rs_{seq}_{i}"} for i, item in enumerate(reasoning)]
        parts = [p for p in parts if p not in reasoning]
        parts = None if all(p.get("type") == "text" for p in parts) else parts
    if content or parts or not (tool_calls or reasoning):
        if parts is not None:
            body = [part_out(p, role) for p in parts if isinstance(p, dict)]
        else:
            body = [{"type": "output_text" if role == "assistant" else "input_text", "text": content}]
        if role == "assistant":
            body = [
                {**p, "annotations": [], "logprobs": []} if p["type"] == "output_text" else p for p in body
            ]
        items.append(
            {"type": "message", "id": f"msg_{seq}", "status": "completed", "role": role, "content": body}
        )
    for i, call in enumerate(tool_calls or []):
        fn = call.get("function") or {} if isinstance(call, dict) else {}
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{seq}_{i}",
                "call_id": call.get("id", ""),
                "name": fn.get("name", ""),
                "arguments": fn.get("arguments", ""),
                "status": "completed",
            }
        )
    return items


def item_list(data: list[dict], has_more: bool) -> dict:
    """OpenAI's list envelope around a page of items."""
    return {
        "object": "list",
        "data": data,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
        "has_more": has_more,
    }


# --- services and selectors ---------------------------------------------------------------------------


def _metadata(raw: Any) -> dict:
    """OpenAI's limits: at most 16 pairs, keys up to 64 characters, string values up to 512."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InvalidRequest("metadata: must be an object of string values.")
    if len(raw) > METADATA_PAIRS:
        raise InvalidRequest(f"metadata: at most {METADATA_PAIRS} key-value pairs.")
    for key, value in raw.items():
        if len(key) > METADATA_KEY:
            raise InvalidRequest(f"metadata: keys are at most {METADATA_KEY} characters.")
        if not isinstance(value, str) or len(value) > METADATA_VALUE:
            raise InvalidRequest(
                f"metadata.{key[:METADATA_KEY]}: must be a string of at most {METADATA_VALUE} characters."
            )
    return raw


def _new_messages(raw: Any) -> list[dict]:
    if raw is None:
        return []
    if not isinstance(raw, list) or len(raw) > MAX_NEW_ITEMS:
        raise InvalidRequest(f"items: must be a list of at most {MAX_NEW_ITEMS} items.")
    if any(not isinstance(i, dict) for i in raw):
        raise InvalidRequest("items: each item must be an object.")
    messages = [m for m in items_to_messages(raw) if m["role"] != "system"]
    return validate_messages(messages, path="items", allow_empty=True)


def conversation_get(*, project, conversation_id: str) -> Conversation:
    target = conversation_target(conversation_id)
    if target is None:
        raise NotFound(
            f"No conversation '{conversation_id[:80]}' in this project.",
            hint="Use an id that POST /v1/openai/conversations returned.",
        )
    memory = memory_get(project=project, memory_id=target.memory_id)
    thread = None if target.thread is None else thread_get(memory=memory, name=target.thread)
    return Conversation(memory, thread)


def conversation_create(
    *,
    project,
    items: Any = None,
    metadata: Any = None,
    memory: Memory | None = None,
    thread: str | None = None,
) -> Conversation:
    """A new memory's default thread; or, given a `memory`, a thread of it (`thread`, else a fresh name)."""
    messages = _new_messages(items)
    if memory is None and thread is None:
        memory, _created = memory_create(project=project, metadata=_metadata(metadata))
        opened = None
    else:
        if metadata is not None:
            raise InvalidRequest(_THREAD_METADATA)
        if memory is None:
            memory, _created = memory_create(project=project)
        opened = thread_open(memory=memory, name=thread or f"conversation-{secrets.token_hex(6)}")
    conversation = Conversation(memory, opened)
    if messages:
        report_accept(memory=memory, messages=messages, failures=[], thread=conversation.thread_name)
    return conversation


_THREAD_METADATA = (
    "metadata: a conversation that is a thread of a memory shares the memory's metadata; "
    "set it on the memory (PATCH /v1/memories/{id})."
)


def conversation_items_add(*, conversation: Conversation, items: Any) -> list[dict]:
    """Append items (stored as a report: durable, background work queued); the items as stored."""
    messages = _new_messages(items)
    if not messages:
        raise InvalidRequest("items: send at least one message, function_call or function_call_output item.")
    memory = conversation.memory
    after = Memory.objects.filter(pk=memory.pk).values_list("last_seq", flat=True).first() or 0
    report_accept(memory=memory, messages=messages, failures=[], thread=conversation.thread_name)
    rows = _messages(conversation).filter(seq__gt=after).order_by("seq").values_list(*ENTRY_FIELDS)
    return [item for row in rows for item in entry_items(*row)]


def _messages(conversation: Conversation):
    return Entry.objects.filter(
        memory=conversation.memory, thread=conversation.thread_name, kind="message", committed=True
    )


def conversation_items(*, conversation: Conversation, after: str | None, order: str, limit: int) -> dict:
    """One page of items, oldest first (`asc`) or newest first (`desc`), after the item `after`."""
    rows = _messages(conversation)
    anchor = None
    if after:
        anchor = _parse_item_id(after)
        rows = rows.filter(seq__gte=anchor[0]) if order == "asc" else rows.filter(seq__lte=anchor[0])
    rows = rows.order_by("seq" if order == "asc" else "-seq").values_list(*ENTRY_FIELDS)[: limit + 2]
    items: list[dict] = []
    for row in rows:
        expanded = entry_items(*row)
        items.extend(expanded if order == "asc" else reversed(expanded))
    if after:
        ids = [i["id"] for i in items]
        items = (
            items[ids.index(after) + 1 :]
            if after in ids
            else [i for i in items if _seq(i["id"]) != anchor[0]]
        )
    return item_list(items[:limit], len(items) > limit)


def _seq(item_id: str) -> int:
    return _parse_item_id(item_id)[0]


def _item_missing(item_id: str) -> NotFound:
    return NotFound(
        f"No item '{item_id[:80]}' in this conversation.",
        hint="Use an item id that GET /v1/openai/conversations/{id}/items returned.",
    )


def _parse_item_id(item_id: str) -> tuple[int, str]:
    match = ITEM_ID.match(item_id or "")
    if match is None:
        raise _item_missing(item_id)
    return (int(match[2]), match[1]) if match[1] else (int(match[4]), match[3])


def _item_entry(conversation: Conversation, item_id: str) -> tuple[Entry, dict]:
    seq, _kind = _parse_item_id(item_id)
    entry = _messages(conversation).filter(seq=seq).first()
    found = [
        i
        for i in (entry_items(*[getattr(entry, f) for f in ENTRY_FIELDS]) if entry else [])
        if i["id"] == item_id
    ]
    if not found:
        raise _item_missing(item_id)
    return entry, found[0]


def conversation_item_get(*, conversation: Conversation, item_id: str) -> dict:
    return _item_entry(conversation, item_id)[1]


def conversation_item_delete(*, conversation: Conversation, item_id: str) -> Conversation:
    """Take the item's message out of the memory (an assistant message goes with all its calls)."""
    entry, _item = _item_entry(conversation, item_id)
    entries_set_committed(memory=conversation.memory, entry_ids=[entry.pk], committed=False)
    return conversation


def conversation_metadata_set(*, conversation: Conversation, metadata: Any) -> Conversation:
    """Replace the memory's metadata through its default thread's conversation."""
    if conversation.thread is not None:
        raise InvalidRequest(_THREAD_METADATA)
    return Conversation(memory_update(memory=conversation.memory, metadata=_metadata(metadata)), None)


def conversation_delete(*, conversation: Conversation) -> dict:
    """The memory, for its default thread's conversation; else only the thread. The receipt."""
    if conversation.thread is None:
        return memory_delete(memory=conversation.memory)
    return thread_delete(memory=conversation.memory, name=conversation.thread.name)
