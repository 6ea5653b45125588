"""``client.facts`` and ``client.entries``: the per-memory facts and entries endpoints."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import quote

from . import _base as b
from ._types import Entry, Fact, Page


def _fact_path(memory_id: str, fact_id: str = "") -> str:
    return b.path_of(memory_id, "/facts" + ("/" + quote(fact_id, safe="") if fact_id else ""))


def _entry_params(include_uncommitted: bool, limit: int | None, cursor: str | None) -> dict[str, Any]:
    params: dict[str, Any] = {"include_uncommitted": "true" if include_uncommitted else "false"}
    params.update(b.list_params(limit, cursor, None, None))
    return params


def _page(data: Any, kind: Any) -> Page:
    return Page([kind.from_json(x) for x in data.get("data") or []], data.get("next_cursor"))


class Facts:
    """Facts of a memory: ``list``, ``create`` (de-duplicated by the server), ``update``, ``delete``."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def list(self, memory_id: str, *, limit: int | None = None, cursor: str | None = None) -> Page:
        return _page(
            self._client._request(
                "GET", _fact_path(memory_id), params=b.list_params(limit, cursor, None, None)
            ),
            Fact,
        )

    def create(self, memory_id: str, text: str) -> Fact:
        return Fact.from_json(
            self._client._request(
                "POST", _fact_path(memory_id), content=b.encode({"text": text}), headers=b.json_headers()
            )
        )

    def update(self, memory_id: str, fact_id: str, text: str) -> Fact:
        return Fact.from_json(
            self._client._request(
                "PATCH",
                _fact_path(memory_id, fact_id),
                content=b.encode({"text": text}),
                headers=b.json_headers(),
            )
        )

    def delete(self, memory_id: str, fact_id: str) -> None:
        self._client._request("DELETE", _fact_path(memory_id, fact_id))


class Entries:
    """Entries of a memory, oldest first: one ``list`` page, or ``all`` of them."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def list(
        self,
        memory_id: str,
        *,
        include_uncommitted: bool = False,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page:
        return _page(
            self._client._request(
                "GET",
                b.path_of(memory_id, "/entries"),
                params=_entry_params(include_uncommitted, limit, cursor),
            ),
            Entry,
        )

    def all(self, memory_id: str, *, include_uncommitted: bool = False) -> Iterator[Entry]:
        cursor = None
        while True:
            page = self.list(memory_id, include_uncommitted=include_uncommitted, limit=1000, cursor=cursor)
            yield from page.data
            if not page.next_cursor:
                return
            cursor = page.next_cursor


class AsyncFacts:
    """Facts of a memory (awaitable): ``list``, ``create``, ``update``, ``delete``."""

    def __init__(self, client: Any) -> None:
        self._client = client

    async def list(self, memory_id: str, *, limit: int | None = None, cursor: str | None = None) -> Page:
        return _page(
            await self._client._request(
                "GET", _fact_path(memory_id), params=b.list_params(limit, cursor, None, None)
            ),
            Fact,
        )

    async def create(self, memory_id: str, text: str) -> Fact:
        return Fact.from_json(
            await self._client._request(
                "POST", _fact_path(memory_id), content=b.encode({"text": text}), headers=b.json_headers()
            )
        )

    async def update(self, memory_id: str, fact_id: str, text: str) -> Fact:
        return Fact.from_json(
            await self._client._request(
                "PATCH",
                _fact_path(memory_id, fact_id),
                content=b.encode({"text": text}),
                headers=b.json_headers(),
            )
        )

    async def delete(self, memory_id: str, fact_id: str) -> None:
        await self._client._request("DELETE", _fact_path(memory_id, fact_id))


class AsyncEntries:
    """Entries of a memory (awaitable), oldest first: one ``list`` page, or ``all`` of them."""

    def __init__(self, client: Any) -> None:
        self._client = client

    async def list(
        self,
        memory_id: str,
        *,
        include_uncommitted: bool = False,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page:
        return _page(
            await self._client._request(
                "GET",
                b.path_of(memory_id, "/entries"),
                params=_entry_params(include_uncommitted, limit, cursor),
            ),
            Entry,
        )

    async def all(self, memory_id: str, *, include_uncommitted: bool = False) -> AsyncIterator[Entry]:
        cursor = None
        while True:
            page = await self.list(
                memory_id, include_uncommitted=include_uncommitted, limit=1000, cursor=cursor
            )
            for entry in page.data:
                yield entry
            if not page.next_cursor:
                return
            cursor = page.next_cursor


def _files_path(memory_id: str | None, external_id: str | None, suffix: str) -> str:
    return b.target(memory_id, external_id)[1] + "/files" + suffix


class Files:
    """Memory files (the backend of Anthropic's memory tool): ``command`` runs one tool command
    as the model sent it and answers ``{"result", "is_error"}``; ``list`` the files under /memories."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def command(
        self,
        memory_id: str | None = None,
        command: dict[str, Any] | None = None,
        *,
        external_id: str | None = None,
    ) -> dict[str, Any]:
        answer: dict[str, Any] = self._client._request(
            "POST",
            _files_path(memory_id, external_id, "/command"),
            content=b.encode(command or {}),
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
        self,
        memory_id: str | None = None,
        command: dict[str, Any] | None = None,
        *,
        external_id: str | None = None,
    ) -> dict[str, Any]:
        answer: dict[str, Any] = await self._client._request(
            "POST",
            _files_path(memory_id, external_id, "/command"),
            content=b.encode(command or {}),
            headers=b.json_headers(),
        )
        return answer

    async def list(
        self, memory_id: str | None = None, *, external_id: str | None = None
    ) -> list[dict[str, Any]]:
        return (await self._client._request("GET", _files_path(memory_id, external_id, ""))).get("data") or []
