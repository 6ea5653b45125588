"""LangChain: ``ThreadlessChatMessageHistory``, a ``BaseChatMessageHistory`` backed by a memory.

    from langchain_core.runnables import ConfigurableFieldSpec
    from langchain_core.runnables.history import RunnableWithMessageHistory
    from threadless.integrations.langchain import ThreadlessChatMessageHistory

    chain = RunnableWithMessageHistory(
        model,
        lambda user_id, session_id: ThreadlessChatMessageHistory(
            external_id=user_id, thread=session_id, client=memory),
        history_factory_config=[
            ConfigurableFieldSpec(id="user_id", annotation=str, is_shared=True),
            ConfigurableFieldSpec(id="session_id", annotation=str, is_shared=True)])

A history's session is a ``thread`` in its user's memory (``external_id`` = the user id): its
window is that conversation's own, its facts and recall span all of the user's conversations.
Without ``thread`` the history is the memory's default thread (one memory per session id when the
session id is passed as ``external_id``). ``messages`` is decorate's window (a dry run:
``store=False``), led by the context block (facts, recall, failures) as a ``SystemMessage`` when
there is one.
``add_messages`` stores each user message with a decorate and what follows it with a report,
so a turn is stored the way the service expects (facts and the recall index are built from it).
With the service down, ``messages`` answers from the local tail and ``on_error`` hears why.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from .. import AsyncThreadless, Threadless, ThreadlessError
from ._common import MemoryRef, async_client, notify, sync_client

__all__ = ["ThreadlessChatMessageHistory", "from_openai", "to_openai"]


def to_openai(message: BaseMessage) -> dict[str, Any] | None:
    """One LangChain message as an OpenAI-chat message (None for a SystemMessage: not history)."""
    content: Any = message.content
    if isinstance(message, SystemMessage):
        return None
    if isinstance(message, HumanMessage):
        out: dict[str, Any] = {"role": "user", "content": content}
    elif isinstance(message, AIMessage):
        out = {"role": "assistant", "content": content or ""}
        calls = [
            {
                "id": call.get("id") or "",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": json.dumps(
                        call.get("args") or {}, ensure_ascii=False, separators=(",", ":")
                    ),
                },
            }
            for call in message.tool_calls
        ]
        if calls:
            out["tool_calls"] = calls
    elif isinstance(message, ToolMessage):
        out = {"role": "tool", "content": content, "tool_call_id": message.tool_call_id}
    else:  # ChatMessage and friends: keep the role when the service knows it
        role = getattr(message, "role", None)
        out = {"role": role if role in ("user", "assistant") else "user", "content": content}
    if message.name:
        out["name"] = message.name
    return out


def _arguments(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        return text
    try:
        value = json.loads(text) if isinstance(text, str) and text.strip() else {}
    except ValueError:
        return {"arguments": text}
    return value if isinstance(value, dict) else {"value": value}


def from_openai(message: dict[str, Any]) -> BaseMessage:
    """One OpenAI-chat message (as decorate answers it) as a LangChain message."""
    role = message.get("role")
    content = message.get("content")
    if content is None:
        content = ""
    extra: dict[str, Any] = {"name": message["name"]} if message.get("name") else {}
    if role == "assistant":
        calls = [
            {
                "name": (c.get("function") or {}).get("name") or "",
                "id": c.get("id") or None,
                "args": _arguments((c.get("function") or {}).get("arguments")),
                "type": "tool_call",
            }
            for c in message.get("tool_calls") or ()
        ]
        return AIMessage(content=content, tool_calls=calls, **extra)
    if role == "tool":
        return ToolMessage(content=content, tool_call_id=message.get("tool_call_id") or "", **extra)
    if role == "system":
        return SystemMessage(content=content, **extra)
    return HumanMessage(content=content, **extra)


def _turns(messages: Sequence[BaseMessage]) -> list[tuple[dict[str, Any] | None, list[dict[str, Any]]]]:
    """(user message or None, what follows it) per turn: decorate stores the first, report the rest."""
    turns: list[tuple[dict[str, Any] | None, list[dict[str, Any]]]] = []
    for message in messages:
        converted = to_openai(message)
        if converted is None:
            continue
        if converted["role"] == "user":
            turns.append((converted, []))
        elif turns:
            turns[-1][1].append(converted)
        else:
            turns.append((None, [converted]))
    return turns


class ThreadlessChatMessageHistory(BaseChatMessageHistory):
    """Chat history of one conversation (``thread``; None: the default thread) of a Threadless
    memory (``memory_id`` or the app's ``external_id``).

    Pass a ``client`` (``Threadless``) and/or an ``async_client`` (``AsyncThreadless``), or let the
    history build a ``Threadless`` from ``api_key``/``base_url``/``timeout``/``on_error``.
    ``instructions``, ``budget_tokens`` and ``recall`` go to every decorate. ``context_message``
    False leaves the context block out of ``messages``. ``clear()`` deletes the thread (the rest
    of the memory stays); without a ``thread`` it deletes the memory (with a ``memory_id`` the
    history then moves to a fresh memory: see ``memory_id``).
    """

    def __init__(
        self,
        memory_id: str | None = None,
        *,
        external_id: str | None = None,
        thread: str | None = None,
        client: Threadless | None = None,
        async_client: AsyncThreadless | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 15.0,
        instructions: str | None = None,
        budget_tokens: int | None = None,
        recall: bool | None = None,
        context_message: bool = True,
        on_error: Any = None,
    ) -> None:
        self._ref = MemoryRef(memory_id, external_id, thread)
        self.on_error = on_error
        self._client = client
        self._async = async_client
        self._config = (api_key, base_url, timeout)
        self.instructions = instructions
        self.budget_tokens = budget_tokens
        self.recall = recall
        self.context_message = context_message
        self.last_request: Any = None  # the DecoratedRequest behind the latest ``messages``

    # --- the clients -------------------------------------------------------------------------------

    @property
    def client(self) -> Threadless:
        if self._client is None:
            self._client = sync_client(None, *self._config, self.on_error)
        return self._client

    @property
    def async_client(self) -> AsyncThreadless:
        if self._async is None:
            self._async = async_client(None, *self._config, self.on_error)
        return self._async

    @property
    def memory_id(self) -> str | None:
        """The memory's id (None for an external id not resolved yet)."""
        return self._ref.memory_id

    @property
    def thread(self) -> str | None:
        """The conversation in the memory (None: its default thread)."""
        return self._ref.thread

    # --- reading -----------------------------------------------------------------------------------

    def _window(self, request: Any) -> list[BaseMessage]:
        self.last_request = request
        out: list[BaseMessage] = []
        if self.context_message and request.context_text:
            out.append(SystemMessage(content=request.context_text))
        out.extend(from_openai(m) for m in request.messages)
        return out

    def _decorate_kwargs(self, store: bool) -> dict[str, Any]:
        return {
            "instructions": self.instructions,
            "budget_tokens": self.budget_tokens,
            "recall": self.recall,
            "store": store,
        }

    def _decorate(self, messages: list[dict[str, Any]], store: bool) -> Any:
        return self._ref.learn(
            self.client.decorate(messages=messages, **self._ref.target(), **self._decorate_kwargs(store))
        )

    async def _adecorate(self, messages: list[dict[str, Any]], store: bool) -> Any:
        return self._ref.learn(
            await self.async_client.decorate(
                messages=messages, **self._ref.target(), **self._decorate_kwargs(store)
            )
        )

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        """Decorate's window (a dry run), led by the context block as a SystemMessage."""
        return self._window(self._decorate([], store=False))

    async def aget_messages(self) -> list[BaseMessage]:
        if self._async is None and self._client is not None:
            return await super().aget_messages()  # only a sync client: run it in an executor
        return self._window(await self._adecorate([], store=False))

    # --- writing -----------------------------------------------------------------------------------

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Store a user message with decorate, the reply, tool calls and results with report."""
        for user, rest in _turns(messages):
            if user is not None:
                self._decorate([user], store=True)
            if rest:
                self.client.report(messages=rest, **self._ref.target())

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        if self._async is None and self._client is not None:
            return await super().aadd_messages(messages)
        for user, rest in _turns(messages):
            if user is not None:
                await self._adecorate([user], store=True)
            if rest:
                self.async_client.report(messages=rest, **self._ref.target())

    def clear(self) -> None:
        """Delete the thread: its messages, and the facts learned only in it (the memory's other
        threads stay). Without a thread, delete the memory and everything derived from it: with an
        external id the next use starts a fresh memory; with a memory id the history goes on in a
        fresh memory (``memory_id`` changes).
        """
        try:
            if self._ref.thread is not None:
                self._ref.delete_thread(self.client)
                return
            memory_id = self._ref.find(self.client)
            if memory_id is not None:
                self.client.delete(memory_id)
            self._ref.forget()
            if self._ref.external_id is None:
                self._ref.memory_id = self.client.create().id
            else:
                self._decorate([], store=False)  # the fresh memory, and an empty local tail for the id
        except ThreadlessError as error:
            self._clear_failed(error)

    async def aclear(self) -> None:
        if self._async is None and self._client is not None:
            return await super().aclear()
        client = self.async_client
        try:
            if self._ref.thread is not None:
                await self._ref.adelete_thread(client)
                return
            memory_id = await self._ref.afind(client)
            if memory_id is not None:
                await client.delete(memory_id)
            self._ref.forget()
            if self._ref.external_id is None:
                self._ref.memory_id = (await client.create()).id
            else:
                await self._adecorate([], store=False)
        except ThreadlessError as error:
            self._clear_failed(error)

    def _clear_failed(self, error: ThreadlessError) -> None:
        if not error.retryable:
            raise error
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
