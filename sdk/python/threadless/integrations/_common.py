"""What the adapters share: building a client, and resolving ``memory_id`` | ``external_id``.

Imports only the SDK's public surface (``threadless``), never a framework.
"""

from __future__ import annotations

import logging
from typing import Any

from .. import AsyncThreadless, Threadless, ThreadlessError

log = logging.getLogger("threadless")


def notify(on_error: Any, error: BaseException, context: dict[str, Any]) -> None:
    """Tell ``on_error`` (or the ``threadless`` logger); whatever the callback raises is logged."""
    if on_error is None:
        log.warning("threadless %s on %s: %s", context.get("operation"), context.get("memory_id"), error)
        return
    try:
        on_error(error, context)
    except Exception:  # the callback's own bug must not stop the agent
        log.exception("threadless: on_error raised; ignored")


def check_ids(memory_id: str | None, external_id: str | None) -> None:
    if (memory_id is None) == (external_id is None):
        raise ThreadlessError(
            "Pass exactly one of memory_id= or external_id=.", code="invalid_request", retryable=False
        )
    for name, value in (("memory_id", memory_id), ("external_id", external_id)):
        if value is not None and (not isinstance(value, str) or not value):
            raise ThreadlessError(
                f"{name}: must be a non-empty string.", code="invalid_request", retryable=False
            )


def sync_client(
    client: Threadless | None, api_key: str | None, base_url: str | None, timeout: float, on_error: Any
) -> Threadless:
    return (
        client
        if client is not None
        else Threadless(api_key=api_key, base_url=base_url, timeout=timeout, on_error=on_error)
    )


def async_client(
    client: AsyncThreadless | None, api_key: str | None, base_url: str | None, timeout: float, on_error: Any
) -> AsyncThreadless:
    return (
        client
        if client is not None
        else AsyncThreadless(api_key=api_key, base_url=base_url, timeout=timeout, on_error=on_error)
    )


class MemoryRef:
    """A memory named by its id, or by the app's ``external_id``, and optionally one ``thread`` of it.

    ``target()`` names it for decorate/report (an external id goes to the SDK's get-or-create
    routes, with its local tail keyed by it, so a new user's first turn needs no create call and
    still answers during an outage; a thread has a window and a tail of its own). ``memory_id`` is
    learnt from the first successful decorate.
    """

    def __init__(self, memory_id: str | None, external_id: str | None, thread: str | None = None) -> None:
        check_ids(memory_id, external_id)
        if thread is not None and (not isinstance(thread, str) or not thread):
            raise ThreadlessError(
                "thread: must be a non-empty string.", code="invalid_request", retryable=False
            )
        self.memory_id = memory_id
        self.external_id = external_id
        self.thread = thread

    @property
    def session_id(self) -> str:
        """The thread, else the external id, else the memory id."""
        if self.thread is not None:
            return self.thread
        return self.external_id if self.external_id is not None else str(self.memory_id)

    def target(self) -> dict[str, Any]:
        if self.external_id is not None:
            return {"memory_id": None, "external_id": self.external_id, "thread": self.thread}
        return {"memory_id": self.memory_id, "thread": self.thread}

    def learn(self, request: Any) -> Any:
        if self.external_id is not None and not request.degraded and request.memory_id:
            self.memory_id = request.memory_id
        return request

    def find(self, client: Threadless) -> str | None:
        """The memory id (an external id is looked up, never created), or None."""
        if self.memory_id is None and self.external_id is not None:
            found = client.list(external_id=self.external_id, limit=1).data
            self.memory_id = found[0].id if found else None
        return self.memory_id

    async def afind(self, client: AsyncThreadless) -> str | None:
        if self.memory_id is None and self.external_id is not None:
            found = (await client.list(external_id=self.external_id, limit=1)).data
            self.memory_id = found[0].id if found else None
        return self.memory_id

    def forget(self) -> None:
        """After the memory was deleted: an external id gets a fresh memory on next use."""
        if self.external_id is not None:
            self.memory_id = None

    def _thread_target(self) -> dict[str, Any]:
        if self.external_id is not None:
            return {"external_id": self.external_id, "thread": self.thread}
        return {"memory_id": self.memory_id, "thread": self.thread}

    def delete_thread(self, client: Threadless) -> None:
        """Delete this thread of the memory (the rest of the memory stays); a thread never used is
        nothing to delete."""
        try:
            client.threads.delete(**self._thread_target())
        except ThreadlessError as error:
            if error.code != "not_found":
                raise

    async def adelete_thread(self, client: AsyncThreadless) -> None:
        try:
            await client.threads.delete(**self._thread_target())
        except ThreadlessError as error:
            if error.code != "not_found":
                raise
