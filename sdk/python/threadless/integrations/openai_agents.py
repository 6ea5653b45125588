"""OpenAI Agents SDK: ``ThreadlessSession``, a ``Session`` backed by a Threadless memory.

    from agents import Agent, Runner
    from threadless.integrations.openai_agents import ThreadlessSession

    session = ThreadlessSession(external_id="user-42", thread="chat-7", client=AsyncThreadless())
    agent = Agent(name="Helper", instructions=session.instructions("Be kind."))
    result = await Runner.run(agent, "What is my dog called?", session=session)

A session is a ``thread`` in its user's memory (``external_id`` = the user id; ``session_id`` is
the thread): its items are that conversation's, its facts and recall span all of the user's
sessions. Without ``thread`` the session is the memory's default thread.

Items are stored as OpenAI-chat messages (so decorate, search, facts and the console understand
them: a function call is an assistant ``tool_calls`` message, its output a ``tool`` message) and
carry the original item in their first content part (``openai_agents_item``), so ``get_items``
gives back exactly what ``add_items`` got. ``get_items`` is decorate's budgeted window (a dry
run); the context block (facts, recall, failures) is not an item: ``instructions(base)`` puts it
in the agent's instructions. Threadless history is append-only: ``pop_item`` hides the newest
item from this session object only (see docs/integrations.md).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from .. import AsyncThreadless, ThreadlessError
from ._common import MemoryRef, async_client, notify

__all__ = ["ITEM_KEY", "ThreadlessSession", "item_to_message", "message_to_items"]

ITEM_KEY = "openai_agents_item"
_INSTRUCTION_ROLES = {"system", "developer"}


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            str(p.get("text") or p.get("refusal") or "")
            for p in value
            if isinstance(p, dict) and ("text" in p or "refusal" in p)
        )
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def item_to_message(item: dict[str, Any]) -> dict[str, Any] | None:
    """An Agents input item as an OpenAI-chat message carrying the item; None for a system item."""
    kind = item.get("type")
    role = item.get("role")
    if kind in (None, "message") and role in _INSTRUCTION_ROLES:
        return None  # instructions, not history (a system message would set the memory's instructions)
    if kind in (None, "message"):
        message: dict[str, Any] = {
            "role": "user" if role == "user" else "assistant",
            "text": _text(item.get("content")),
        }
    elif kind == "function_call":
        message = {
            "role": "assistant",
            "text": "",
            "tool_calls": [
                {
                    "id": item.get("call_id") or "",
                    "type": "function",
                    "function": {"name": item.get("name") or "", "arguments": item.get("arguments") or ""},
                }
            ],
        }
    elif isinstance(kind, str) and kind.endswith("_output") and item.get("call_id"):
        message = {"role": "tool", "text": _text(item.get("output")), "tool_call_id": item["call_id"]}
    else:  # reasoning, hosted tool calls, …: kept for the Agents SDK, opaque to the rest
        message = {"role": "assistant", "text": _text(item.get("content"))}
    out = {"role": message["role"], "content": [{"type": "text", "text": message["text"], ITEM_KEY: item}]}
    for key in ("tool_calls", "tool_call_id"):
        if key in message:
            out[key] = message[key]
    return out


def message_to_items(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The items behind a window message: the carried item, else one built from the chat message."""
    content = message.get("content")
    if isinstance(content, list) and content and isinstance(content[0], dict) and ITEM_KEY in content[0]:
        return [content[0][ITEM_KEY]]
    role, text = message.get("role"), _text(content)
    if role == "tool":
        return [
            {"type": "function_call_output", "call_id": message.get("tool_call_id") or "", "output": text}
        ]
    if role == "assistant":
        items: list[dict[str, Any]] = [{"role": "assistant", "content": text}] if text else []
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            items.append(
                {
                    "type": "function_call",
                    "call_id": call.get("id") or "",
                    "name": function.get("name") or "",
                    "arguments": function.get("arguments") or "",
                }
            )
        return items
    return [{"role": "user", "content": text}]


def _key(item: Any) -> str:
    return json.dumps(item, sort_keys=True, ensure_ascii=False, default=str)


class ThreadlessSession:
    """An Agents SDK ``Session`` over one conversation (``thread``) of a memory (``memory_id`` or
    the app's ``external_id``).

    ``session_id`` is the thread (without one: the external id, or the memory id).
    ``budget_tokens`` / ``recall`` go to decorate. ``context_text`` is the context block of the
    latest ``get_items``.
    """

    session_settings = None

    def __init__(
        self,
        memory_id: str | None = None,
        *,
        external_id: str | None = None,
        thread: str | None = None,
        client: AsyncThreadless | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 15.0,
        budget_tokens: int | None = None,
        recall: bool | None = None,
        on_error: Any = None,
    ) -> None:
        self._ref = MemoryRef(memory_id, external_id, thread)
        self.session_id = self._ref.session_id
        self.on_error = on_error
        self.client = async_client(client, api_key, base_url, timeout, on_error)
        self.budget_tokens = budget_tokens
        self.recall = recall
        self.context_text = ""
        self.last_request: Any = None
        self._popped: Counter[str] = Counter()  # items hidden by pop_item (this object only)

    @property
    def memory_id(self) -> str | None:
        return self._ref.memory_id

    @property
    def thread(self) -> str | None:
        return self._ref.thread

    def instructions(self, base: str = "") -> Callable[[Any, Any], str]:
        """Dynamic instructions for ``Agent(instructions=…)``: ``base`` + the context block."""

        def build(_context: Any, _agent: Any) -> str:
            if base and self.context_text:
                return base + "\n\n" + self.context_text
            return base or self.context_text

        return build

    async def _decorate(self, messages: list[dict[str, Any]], store: bool) -> Any:
        return self._ref.learn(
            await self.client.decorate(
                messages=messages,
                **self._ref.target(),
                budget_tokens=self.budget_tokens,
                recall=self.recall,
                store=store,
            )
        )

    async def get_items(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Decorate's window as items, oldest first (the newest ``limit`` of them)."""
        request = await self._decorate([], store=False)
        self.last_request = request
        self.context_text = request.context_text
        items = [item for message in request.messages for item in message_to_items(message)]
        if self._popped:
            hidden, kept = Counter(self._popped), []
            for item in reversed(items):
                key = _key(item)
                if hidden[key]:
                    hidden[key] -= 1
                else:
                    kept.append(item)
            items = kept[::-1]
        if limit is not None:
            items = items[-limit:] if limit > 0 else []
        return items

    async def add_items(self, items: list[dict[str, Any]]) -> None:
        """A user message is stored with decorate (it opens a turn), what follows with report."""
        pending: list[dict[str, Any]] = []
        for item in items:
            message = item_to_message(dict(item))
            if message is None:
                continue
            if message["role"] == "user":
                await self._report(pending)
                pending = []
                await self._decorate([message], store=True)
            else:
                pending.append(message)
        await self._report(pending)

    async def _report(self, messages: list[dict[str, Any]]) -> None:
        if messages:
            self.client.report(messages=messages, **self._ref.target())

    async def pop_item(self) -> dict[str, Any] | None:
        """The newest item, hidden from this session's ``get_items`` from now on (it stays stored)."""
        items = await self.get_items(limit=1)
        if not items:
            return None
        self._popped[_key(items[-1])] += 1
        return items[-1]

    async def clear_session(self) -> None:
        """Delete the session's thread (the user's other sessions and the facts learned there stay).
        Without a thread, delete the memory (entries, facts, digests); an external id starts afresh
        on next use."""
        self._popped.clear()
        try:
            if self._ref.thread is not None:
                await self._ref.adelete_thread(self.client)
                return
            memory_id = await self._ref.afind(self.client)
            if memory_id is not None:
                await self.client.delete(memory_id)
            self._ref.forget()
            if self._ref.external_id is None:
                self._ref.memory_id = (await self.client.create()).id
            else:
                await self._decorate([], store=False)  # the fresh memory, and an empty local tail for the id
        except ThreadlessError as error:
            if not error.retryable:
                raise
            notify(
                self.on_error,
                error,
                {
                    "operation": "clear",
                    "memory_id": self._ref.memory_id,
                    "external_id": self._ref.external_id,
                    "thread": self._ref.thread,
                },
            )
