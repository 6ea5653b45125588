"""What the adapters share: building a client, and resolving ``memory_id`` | ``external_id``.

Imports only the SDK's public surface (``threadless``), never a framework.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from .. import AsyncThreadless, Threadless, ThreadlessError

log = logging.getLogger("threadless")

# The tail key used while an external id could not be resolved (the service is down): decorate
# still falls back to a local tail under it, and the next successful resolve replaces it.
UNRESOLVED_PREFIX = "external:"


def notify(on_error: Any, error: BaseException, context: dict) -> None:
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
        raise ThreadlessError("Pass exactly one of memory_id= or external_id=.", code="invalid_request",
                              retryable=False)
    for name, value in (("memory_id", memory_id), ("external_id", external_id)):
        if value is not None and (not isinstance(value, str) or not value):
            raise ThreadlessError(f"{name}: must be a non-empty string.", code="invalid_request", retryable=False)


def sync_client(client: Threadless | None, api_key: str | None, base_url: str | None, timeout: float,
                on_error: Any) -> Threadless:
    return client if client is not None else Threadless(api_key=api_key, base_url=base_url, timeout=timeout,
                                                        on_error=on_error)


def async_client(client: AsyncThreadless | None, api_key: str | None, base_url: str | None, timeout: float,
                 on_error: Any) -> AsyncThreadless:
    return client if client is not None else AsyncThreadless(api_key=api_key, base_url=base_url, timeout=timeout,
                                                             on_error=on_error)


def _resolvable(error: ThreadlessError) -> bool:
    # The service could not answer (network, timeout, 5xx, 429, 408): degrade. Other 4xx: the
    # caller's mistake (a bad key, an external id the server refuses), raise.
    return bool(error.retryable)


class MemoryRef:
    """A memory named by its id, or by the app's ``external_id`` (get-or-create on first use).

    ``resolve`` answers the memory id; while the service cannot create/find the memory it
    answers a local tail key (``external:<id>``) and tells ``on_error``, so the framework call
    still gets a (degraded) answer. The next call tries again.
    """

    def __init__(self, memory_id: str | None, external_id: str | None, on_error: Any) -> None:
        check_ids(memory_id, external_id)
        self.memory_id = memory_id
        self.external_id = external_id
        self.on_error = on_error
        self._lock = threading.Lock()

    @property
    def session_id(self) -> str:
        return self.external_id if self.external_id is not None else str(self.memory_id)

    def _unresolved(self, error: ThreadlessError) -> str:
        if not _resolvable(error):
            raise error
        notify(self.on_error, error, {"operation": "resolve", "memory_id": None, "external_id": self.external_id})
        return UNRESOLVED_PREFIX + str(self.external_id)

    def resolve(self, client: Threadless) -> str:
        if self.memory_id is not None:
            return self.memory_id
        with self._lock:
            if self.memory_id is None:
                try:
                    self.memory_id = client.create(external_id=self.external_id).id
                except ThreadlessError as error:
                    return self._unresolved(error)
            return self.memory_id

    async def aresolve(self, client: AsyncThreadless) -> str:
        if self.memory_id is not None:
            return self.memory_id
        try:
            memory = await client.create(external_id=self.external_id)
        except ThreadlessError as error:
            return self._unresolved(error)
        self.memory_id = memory.id
        return self.memory_id

    def forget(self) -> None:
        """After the memory was deleted: an external id creates a fresh one on next use."""
        if self.external_id is not None:
            self.memory_id = None


def is_unresolved(memory_id: str) -> bool:
    return memory_id.startswith(UNRESOLVED_PREFIX)
