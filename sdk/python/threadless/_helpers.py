"""``client.facts``, ``client.entries``, ``client.threads`` and ``client.files``: a memory's sub-resources."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any
from urllib.parse import quote

from . import _base as b
from ._errors import ThreadlessError
from ._types import Entry, Fact, Page, Thread


def _fact_path(memory_path: str, fact_id: str | None) -> str:
    if not isinstance(fact_id, str) or not fact_id:
        raise ThreadlessError(
            "fact_id: must be a non-empty string (a fact's id).", code="invalid_request", retryable=False
        )
    return memory_path + "/facts/" + quote(fact_id, safe="")


def _entry_params(
    include_uncommitted: bool, thread: str | None, limit: int | None, cursor: str | None
) -> dict[str, Any]:
    params: dict[str, Any] = {"include_uncommitted": "true" if include_uncommitted else "false"}
    if thread is not None:
        b.check_thread(thread)
        params["thread"] = thread
    params.update(b.list_params(limit, cursor, None, None))
    return params


def _page(data: Any, kind: Any) -> Page:
    return Page([kind.from_json(x) for x in data.get("data") or []], data.get("next_cursor"))


class Facts:
    """Facts of a memory: ``list``, ``create`` (de-duplicated by the server), ``update``, ``delete``."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def list(
        self,
        memory_id: str | None = None,
        *,
        external_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page:
        """Newest first. By an external id no memory has yet: an empty page (nothing is created)."""
        path = self._client._read_path(memory_id, external_id)
        if path is None:
            return Page([])
        return _page(
            self._client._request("GET", path + "/facts", params=b.list_params(limit, cursor, None, None)),
            Fact,
        )

    def create(
        self, memory_id: str | None = None, text: str | None = None, *, external_id: str | None = None
    ) -> Fact:
        """Add a fact (the server answers the one it knows already, if any). By an external id no
        memory has yet: a 404 ``not_found`` (nothing is created)."""
        path = self._client._memory_path(memory_id, external_id)
        return Fact.from_json(
            self._client._request(
                "POST", path + "/facts", content=b.encode({"text": text}), headers=b.json_headers()
            )
        )

    def update(
        self,
        memory_id: str | None = None,
        fact_id: str | None = None,
        text: str | None = None,
        *,
        external_id: str | None = None,
    ) -> Fact:
        path = self._client._memory_path(memory_id, external_id)
        return Fact.from_json(
            self._client._request(
                "PATCH",
                _fact_path(path, fact_id),
                content=b.encode({"text": text}),
                headers=b.json_headers(),
            )
        )

    def delete(
        self, memory_id: str | None = None, fact_id: str | None = None, *, external_id: str | None = None
    ) -> None:
        path = self._client._memory_path(memory_id, external_id)
        self._client._request("DELETE", _fact_path(path, fact_id))


class Entries:
    """Entries of a memory, oldest first (every thread's, or ``thread``'s): one ``list`` page, or
    ``all`` of them. By an external id no memory has yet: none (nothing is created)."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def list(
        self,
        memory_id: str | None = None,
        *,
        external_id: str | None = None,
        thread: str | None = None,
        include_uncommitted: bool = False,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page:
        params = _entry_params(include_uncommitted, thread, limit, cursor)
        path = self._client._read_path(memory_id, external_id)
        if path is None:
            return Page([])
        return _page(self._client._request("GET", path + "/entries", params=params), Entry)

    def all(
        self,
        memory_id: str | None = None,
        *,
        external_id: str | None = None,
        thread: str | None = None,
        include_uncommitted: bool = False,
    ) -> Iterator[Entry]:
        path = self._client._read_path(memory_id, external_id)
        cursor = None
        while path is not None:
            params = _entry_params(include_uncommitted, thread, 1000, cursor)
            page = _page(self._client._request("GET", path + "/entries", params=params), Entry)
            yield from page.data
            if not page.next_cursor:
                return
            cursor = page.next_cursor


class AsyncFacts:
    """Facts of a memory (awaitable): ``list``, ``create``, ``update``, ``delete``."""

    def __init__(self, client: Any) -> None:
        self._client = client

    async def list(
        self,
        memory_id: str | None = None,
        *,
        external_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page:
        path = await self._client._read_path(memory_id, external_id)
        if path is None:
            return Page([])
        return _page(
            await self._client._request(
                "GET", path + "/facts", params=b.list_params(limit, cursor, None, None)
            ),
            Fact,
        )

    async def create(
        self, memory_id: str | None = None, text: str | None = None, *, external_id: str | None = None
    ) -> Fact:
        """Add a fact (the server answers the one it knows already, if any). By an external id no
        memory has yet: a 404 ``not_found`` (nothing is created)."""
        path = await self._client._memory_path(memory_id, external_id)
        return Fact.from_json(
            await self._client._request(
                "POST", path + "/facts", content=b.encode({"text": text}), headers=b.json_headers()
            )
        )

    async def update(
        self,
        memory_id: str | None = None,
        fact_id: str | None = None,
        text: str | None = None,
        *,
        external_id: str | None = None,
    ) -> Fact:
        path = await self._client._memory_path(memory_id, external_id)
        return Fact.from_json(
            await self._client._request(
                "PATCH",
                _fact_path(path, fact_id),
                content=b.encode({"text": text}),
                headers=b.json_headers(),
            )
        )

    async def delete(
        self, memory_id: str | None = None, fact_id: str | None = None, *, external_id: str | None = None
    ) -> None:
        path = await self._client._memory_path(memory_id, external_id)
        await self._client._request("DELETE", _fact_path(path, fact_id))


class AsyncEntries:
    """Entries of a memory (awaitable), oldest first: one ``list`` page, or ``all`` of them."""

    def __init__(self, client: Any) -> None:
        self._client = client

    async def list(
        self,
        memory_id: str | None = None,
        *,
        external_id: str | None = None,
        thread: str | None = None,
        include_uncommitted: bool = False,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page:
        params = _entry_params(include_uncommitted, thread, limit, cursor)
        path = await self._client._read_path(memory_id, external_id)
        if path is None:
            return Page([])
        return _page(await self._client._request("GET", path + "/entries", params=params), Entry)

    async def all(
        self,
        memory_id: str | None = None,
        *,
        external_id: str | None = None,
        thread: str | None = None,
        include_uncommitted: bool = False,
    ) -> AsyncIterator[Entry]:
        path = await self._client._read_path(memory_id, external_id)
        cursor = None
        while path is not None:
            params = _entry_params(include_uncommitted, thread, 1000, cursor)
            page = _page(await self._client._request("GET", path + "/entries", params=params), Entry)
            for entry in page.data:
                yield entry
            if not page.next_cursor:
                return
            cursor = page.next_cursor


class Threads:
    """A memory's conversations (``memory_id`` or ``external_id=``): ``list`` (newest activity
    first), ``get`` and ``delete`` one. Reading by an external id creates no memory."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def list(
        self,
        memory_id: str | None = None,
        *,
        external_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page:
        path = b.thread_path(b.target(memory_id, external_id)[1], None)
        return _page(
            self._client._request("GET", path, params=b.list_params(limit, cursor, None, None)), Thread
        )

    def get(
        self, memory_id: str | None = None, thread: str | None = None, *, external_id: str | None = None
    ) -> Thread:
        return Thread.from_json(self._client._request("GET", _thread_path(memory_id, external_id, thread)))

    def delete(
        self, memory_id: str | None = None, thread: str | None = None, *, external_id: str | None = None
    ) -> dict[str, Any]:
        """Remove the thread (its entries, turns, digests, index rows, summary, the facts learned
        only in it) and its local tail; answers the receipt's counts (``{"threads": 1, "entries": n,
        …}``)."""
        path = _thread_path(memory_id, external_id, thread)
        data = self._client._request("DELETE", path)
        self._client._tails.forget(b.target(memory_id, external_id, thread)[0])
        deleted: dict[str, Any] = data.get("deleted", {})
        return deleted


class AsyncThreads:
    """A memory's conversations (awaitable): ``list``, ``get``, ``delete``, as ``Threads``."""

    def __init__(self, client: Any) -> None:
        self._client = client

    async def list(
        self,
        memory_id: str | None = None,
        *,
        external_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page:
        path = b.thread_path(b.target(memory_id, external_id)[1], None)
        return _page(
            await self._client._request("GET", path, params=b.list_params(limit, cursor, None, None)),
            Thread,
        )

    async def get(
        self, memory_id: str | None = None, thread: str | None = None, *, external_id: str | None = None
    ) -> Thread:
        return Thread.from_json(
            await self._client._request("GET", _thread_path(memory_id, external_id, thread))
        )

    async def delete(
        self, memory_id: str | None = None, thread: str | None = None, *, external_id: str | None = None
    ) -> dict[str, Any]:
        path = _thread_path(memory_id, external_id, thread)
        data = await self._client._request("DELETE", path)
        self._client._tails.forget(b.target(memory_id, external_id, thread)[0])
        deleted: dict[str, Any] = data.get("deleted", {})
        return deleted


def _thread_path(memory_id: str | None, external_id: str | None, thread: str | None) -> str:
    if thread is None:
        raise ThreadlessError(
            "thread: name the thread (the id you passed to decorate).",
            code="invalid_request",
            retryable=False,
        )
    return b.thread_path(b.target(memory_id, external_id)[1], thread)


def _files_path(memory_id: str | None, external_id: str | None, suffix: str) -> str:
    return b.target(memory_id, external_id)[1] + "/files" + suffix


class Files:
    """Memory files (the backend of Anthropic's memory tool): ``command`` runs one tool command
    as the model sent it and answers ``{"result", "is_error"}``; ``list`` the files under /memories."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def command(
        self, command: Mapping[str, Any], *, memory_id: str | None = None, external_id: str | None = None
    ) -> dict[str, Any]:
        """Run one command on the memory ``memory_id=`` or ``external_id=`` (get-or-create):
        ``command({"command": "view", "path": "/memories"}, external_id="user-42")``."""
        answer: dict[str, Any] = self._client._request(
            "POST",
            _files_path(memory_id, external_id, "/command"),
            content=b.encode(dict(command)),
            headers=b.json_headers(),
        )
        return answer

    def list(self, memory_id: str | None = None, *, external_id: str | None = None) -> list[dict[str, Any]]:
        return self._client._request("GET", _files_path(memory_id, external_id, "")).get("data") or []


class AsyncFiles:
    """Memory files (awaitable): ``command`` and ``list``, as ``Files``."""

    def __init__(self, client: Any) -> None:
        self._client = client

    async def command(
        self, command: Mapping[str, Any], *, memory_id: str | None = None, external_id: str | None = None
    ) -> dict[str, Any]:
        """Run one command on the memory ``memory_id=`` or ``external_id=`` (get-or-create):
        ``command({"command": "view", "path": "/memories"}, external_id="user-42")``."""
        answer: dict[str, Any] = await self._client._request(
            "POST",
            _files_path(memory_id, external_id, "/command"),
            content=b.encode(dict(command)),
            headers=b.json_headers(),
        )
        return answer

    async def list(
        self, memory_id: str | None = None, *, external_id: str | None = None
    ) -> list[dict[str, Any]]:
        return (await self._client._request("GET", _files_path(memory_id, external_id, ""))).get("data") or []
