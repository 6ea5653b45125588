"""Anthropic's memory tool (``memory_20250818``), stored in Threadless (``pip install
'threadless[anthropic]'``).

``ThreadlessMemoryTool`` / ``AsyncThreadlessMemoryTool`` subclass the ``anthropic`` package's
``BetaAbstractMemoryTool`` / ``BetaAsyncAbstractMemoryTool``, so they go where its own
``BetaLocalFilesystemMemoryTool`` goes::

    tool = ThreadlessMemoryTool(Threadless(), external_id="user-42")
    runner = client.beta.messages.tool_runner(model=..., max_tokens=..., messages=[...], tools=[tool])

Each command is sent as the model wrote it to ``POST /v1/memories/{id}/files/command``; the
server runs it with the reference backend's semantics and texts. A refused command raises
``ToolError`` with the server's text (the runner turns it into an error result, as for the
reference). When Threadless cannot be reached the command raises a ``ToolError`` with a short
text too, so the agent keeps running, and ``on_error(error, {"operation", "memory_id"})`` hears why.
"""

from __future__ import annotations

from typing import Any

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError

from .. import AsyncThreadless, Threadless, ThreadlessError
from ._common import check_ids, notify

__all__ = ["AsyncThreadlessMemoryTool", "ThreadlessMemoryTool"]


def _command_dict(command: Any) -> dict[str, Any]:
    if isinstance(command, dict):
        return command
    return command.to_dict() if hasattr(command, "to_dict") else dict(command)


def _outage_text(error: ThreadlessError) -> str:
    if error.retryable:
        return f"Memory is unavailable right now (Threadless: {error.code}). Try again later."
    return f"Memory refused the command (Threadless: {error.code}): {error.message}"


def _answer(data: Any) -> str:
    result = data.get("result") if isinstance(data, dict) else None
    if not isinstance(result, str):
        raise ToolError(
            "Memory is unavailable right now (Threadless sent an unexpected answer). Try again later."
        )
    if data.get("is_error"):
        raise ToolError(result)
    return result


class ThreadlessMemoryTool(BetaAbstractMemoryTool):
    """The memory tool's files in one Threadless memory (``memory_id``, or your ``external_id``:
    created on first use)."""

    def __init__(
        self,
        client: Threadless | None = None,
        memory_id: str | None = None,
        *,
        external_id: str | None = None,
        on_error: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 15.0,
        cache_control: Any = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        check_ids(memory_id, external_id)
        self.client = (
            client
            if client is not None
            else Threadless(api_key=api_key, base_url=base_url, timeout=timeout, on_error=on_error)
        )
        self.memory_id, self.external_id = memory_id, external_id
        self.on_error = on_error if on_error is not None else self.client.on_error

    def call(self, input: object) -> str:  # noqa: A002 - the base class's name
        return self._run(_command_dict(input))

    def _run(self, command: dict[str, Any]) -> str:
        try:
            data = self.client.files.command(command, memory_id=self.memory_id, external_id=self.external_id)
        except ThreadlessError as error:
            notify(
                self.on_error,
                error,
                {
                    "operation": f"memory.{command.get('command')}",
                    "memory_id": self.memory_id or self.external_id,
                },
            )
            raise ToolError(_outage_text(error)) from error
        return _answer(data)

    def view(self, command: Any) -> str:
        return self._run(_command_dict(command))

    def create(self, command: Any) -> str:
        return self._run(_command_dict(command))

    def str_replace(self, command: Any) -> str:
        return self._run(_command_dict(command))

    def insert(self, command: Any) -> str:
        return self._run(_command_dict(command))

    def delete(self, command: Any) -> str:
        return self._run(_command_dict(command))

    def rename(self, command: Any) -> str:
        return self._run(_command_dict(command))


class AsyncThreadlessMemoryTool(BetaAsyncAbstractMemoryTool):
    """``ThreadlessMemoryTool`` over ``AsyncThreadless``, for ``AsyncAnthropic``'s tool runner."""

    def __init__(
        self,
        client: AsyncThreadless | None = None,
        memory_id: str | None = None,
        *,
        external_id: str | None = None,
        on_error: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 15.0,
        cache_control: Any = None,
    ) -> None:
        super().__init__(cache_control=cache_control)
        check_ids(memory_id, external_id)
        self.client = (
            client
            if client is not None
            else AsyncThreadless(api_key=api_key, base_url=base_url, timeout=timeout, on_error=on_error)
        )
        self.memory_id, self.external_id = memory_id, external_id
        self.on_error = on_error if on_error is not None else self.client.on_error

    async def call(self, input: object) -> str:  # noqa: A002 - the base class's name
        return await self._run(_command_dict(input))

    async def _run(self, command: dict[str, Any]) -> str:
        try:
            data = await self.client.files.command(
                command, memory_id=self.memory_id, external_id=self.external_id
            )
        except ThreadlessError as error:
            notify(
                self.on_error,
                error,
                {
                    "operation": f"memory.{command.get('command')}",
                    "memory_id": self.memory_id or self.external_id,
                },
            )
            raise ToolError(_outage_text(error)) from error
        return _answer(data)

    async def view(self, command: Any) -> str:
        return await self._run(_command_dict(command))

    async def create(self, command: Any) -> str:
        return await self._run(_command_dict(command))

    async def str_replace(self, command: Any) -> str:
        return await self._run(_command_dict(command))

    async def insert(self, command: Any) -> str:
        return await self._run(_command_dict(command))

    async def delete(self, command: Any) -> str:
        return await self._run(_command_dict(command))

    async def rename(self, command: Any) -> str:
        return await self._run(_command_dict(command))
