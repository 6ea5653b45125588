"""AsyncThreadless: the asyncio client, same behaviour as Threadless.

Task-safe within one event loop: one httpx.AsyncClient (one connection pool) shared by every
task. report schedules a task and returns it at once; ``await client.flush()`` (or ``async with``)
before the loop ends, since there is no interpreter-exit hook for a loop that is gone.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from . import _base as b
from ._errors import ThreadlessConnectionError, ThreadlessError, ThreadlessTimeoutError
from ._helpers import AsyncEntries, AsyncFacts
from ._tail import TailStore
from ._types import DecoratedRequest, Memory, Page

__all__ = ["AsyncThreadless"]

_timeout = getattr(asyncio, "timeout", None)


class AsyncThreadless:
    """The asyncio twin of :class:`threadless.Threadless` (same constructor, awaitable methods).

    ``on_error`` may be a plain function or a coroutine function.
    """

    def __init__(self, api_key: str | None = None, base_url: str | None = None, timeout: float = 15.0,
                 tail_tokens: int = 60_000, max_tails: int = 200, on_error: b.OnError | None = None) -> None:
        api_key, self.base_url = b.resolve_config(api_key, base_url, timeout, tail_tokens, max_tails)
        self.timeout = float(timeout)
        self.on_error = on_error
        self._tails = TailStore(tail_tokens=tail_tokens, max_tails=max_tails)
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=b.default_headers(api_key),
                                       timeout=httpx.Timeout(self.timeout),
                                       limits=httpx.Limits(max_connections=100, max_keepalive_connections=20))
        self._latest: dict[str, asyncio.Task] = {}  # memory id -> its newest report task
        self._tasks: set[asyncio.Task] = set()
        self._closed = False
        self.facts = AsyncFacts(self)
        self.entries = AsyncEntries(self)

    @property
    def tail_tokens(self) -> int:
        return self._tails.tail_tokens

    @property
    def max_tails(self) -> int:
        return self._tails.max_tails

    # --- transport -------------------------------------------------------------------------------

    async def _send(self, method: str, path: str, content: bytes | None, params: Any, headers: dict | None):
        response = await self._http.request(method, path, content=content, params=params, headers=headers)
        return response.status_code, response.content, response.headers

    async def _request(self, method: str, path: str, *, content: bytes | None = None, params: Any = None,
                       headers: dict | None = None) -> Any:
        """One HTTP call within the total deadline (cancelled when it passes)."""
        if self._closed:
            raise ThreadlessError("The client is closed.", code="client_closed", retryable=False)
        try:
            if _timeout is not None:  # 3.11+: no extra task per call
                async with _timeout(self.timeout):
                    status, body, answer_headers = await self._send(method, path, content, params, headers)
            else:
                status, body, answer_headers = await asyncio.wait_for(
                    self._send(method, path, content, params, headers), self.timeout)
        except (asyncio.TimeoutError, httpx.TimeoutException) as exc:  # noqa: UP041 (differs on 3.10)
            raise ThreadlessTimeoutError(f"{method} {path}: no answer within {self.timeout:g} s.") from exc
        except (httpx.HTTPError, OSError) as exc:
            raise ThreadlessConnectionError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        return b.answer_json(status, body, answer_headers, self.base_url + path)

    async def _notify(self, error: BaseException, context: dict) -> None:
        result = b.call_on_error(self.on_error, error, context)
        if inspect.isawaitable(result):
            try:
                await result
            except Exception:
                b.log.exception("threadless: on_error raised while handling %s on %s; ignored",
                                context.get("operation"), context.get("memory_id"))

    # --- decorate and report ---------------------------------------------------------------------

    async def decorate(self, memory_id: str, messages: Sequence[Mapping[str, Any]], instructions: str | None = None,
                       *, budget_tokens: int | None = None, recall: bool | None = None, store: bool | None = None,
                       idempotency_key: str | None = None) -> DecoratedRequest:
        """See :meth:`threadless.Threadless.decorate`."""
        path = b.path_of(memory_id, "/decorate")
        messages = b.as_messages(messages)
        content = b.encode(b.decorate_body(messages, instructions, budget_tokens, recall, store))
        pending = self._latest.get(memory_id)
        if pending is not None and not pending.done():
            await asyncio.wait({pending}, timeout=b.REPORT_WAIT_SECONDS)
        try:
            data = await self._request("POST", path, content=content, headers=b.json_headers(idempotency_key))
            request = b.decorated_from(memory_id, data, 200, {})
        except ThreadlessError as error:
            if not b.should_fall_back(error):
                raise
            request = b.degraded_request(self._tails, memory_id, messages, instructions, error)
            await self._notify(error, {"operation": "decorate", "memory_id": memory_id})
            return request
        b.refresh_tail(self._tails, memory_id, request, store)
        return request

    def report(self, memory_id: str, messages: Sequence[Mapping[str, Any]], *,
               failures: Sequence[Mapping[str, Any]] | None = None,
               idempotency_key: str | None = None) -> asyncio.Task | None:
        """Schedule the report and return at once (a plain call, no await needed).

        Returns the background task (awaiting it waits for the send and never raises), or None
        when the report was skipped or could not be scheduled (then on_error was told).
        """
        context = {"operation": "report", "memory_id": memory_id}
        try:
            path = b.path_of(memory_id, "/report")
            messages = b.as_messages(messages)
            if self._tails.is_degraded(memory_id):
                return None  # its user message was never stored: nothing to attach the reply to
            body: dict = {"messages": messages}
            if failures:
                body["failures"] = list(failures)
            content = b.encode(body)
            loop = asyncio.get_running_loop()  # before the coroutine exists, so none is left un-awaited
            previous = self._latest.get(memory_id)
            task = loop.create_task(
                self._report_job(previous, memory_id, path, content, b.json_headers(idempotency_key), messages))
        except Exception as error:
            result = b.call_on_error(self.on_error, error, context)
            if inspect.iscoroutine(result):
                result.close()  # no loop to run it on
            return None
        self._latest[memory_id] = task
        self._tasks.add(task)
        task.add_done_callback(lambda t: self._report_done(memory_id, t))
        return task

    async def _report_job(self, previous: asyncio.Task | None, memory_id: str, path: str, content: bytes,
                          headers: dict, messages: list) -> None:
        # Reports on one memory go out one at a time, in order; other memories run concurrently.
        if previous is not None and not previous.done():
            await asyncio.wait({previous})
        try:
            await self._request("POST", path, content=content, headers=headers)
            self._tails.append(memory_id, messages)
        except Exception as error:
            await self._notify(error, {"operation": "report", "memory_id": memory_id})

    def _report_done(self, memory_id: str, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if self._latest.get(memory_id) is task:
            del self._latest[memory_id]
        if not task.cancelled() and task.exception() is not None:  # not expected: _report_job catches
            b.log.error("threadless: report task failed", exc_info=task.exception())

    async def flush(self, timeout: float | None = None) -> bool:
        """Wait for reports still queued or in flight. True when none is left."""
        while self._tasks:
            done, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
            if pending:
                return False
        return True

    # --- memories ----------------------------------------------------------------------------------

    async def create(self, *, metadata: Mapping[str, Any] | None = None, external_id: str | None = None,
                     instructions: str | None = None, policy: Mapping[str, Any] | None = None) -> Memory:
        body = b.memory_fields(metadata, external_id, instructions, policy)
        return Memory.from_json(await self._request("POST", "/memories", content=b.encode(body),
                                                    headers=b.json_headers()))

    async def get(self, memory_id: str) -> Memory:
        return Memory.from_json(await self._request("GET", b.path_of(memory_id)))

    async def update(self, memory_id: str, *, metadata: Mapping[str, Any] | None = None,
                     instructions: str | None = None, policy: Mapping[str, Any] | None = None) -> Memory:
        body = b.memory_fields(metadata, None, instructions, policy)
        return Memory.from_json(await self._request("PATCH", b.path_of(memory_id), content=b.encode(body),
                                                    headers=b.json_headers()))

    async def delete(self, memory_id: str) -> None:
        await self._request("DELETE", b.path_of(memory_id))
        self._tails.forget(memory_id)

    async def list(self, *, limit: int | None = None, cursor: str | None = None, external_id: str | None = None,
                   metadata: Mapping[str, Any] | None = None) -> Page:
        return b.memory_page(await self._request("GET", "/memories",
                                                 params=b.list_params(limit, cursor, external_id, metadata)))

    async def delete_matching(self, *, metadata: Mapping[str, Any] | None = None,
                              external_id: str | None = None) -> dict:
        data = await self._request("DELETE", "/memories", params=b.list_params(None, None, external_id, metadata))
        return data.get("deleted", {})

    async def search(self, memory_id: str, query: str, *, limit: int | None = None) -> list[dict]:
        body: dict = {"query": query}
        if limit is not None:
            body["limit"] = limit
        data = await self._request("POST", b.path_of(memory_id, "/search"), content=b.encode(body),
                                   headers=b.json_headers())
        return data.get("data") or []

    # --- lifecycle ---------------------------------------------------------------------------------

    async def close(self, timeout: float | None = None) -> None:
        """Wait for outstanding reports (up to ``timeout``, default the client's), then close the pool."""
        if self._closed:
            return
        await self.flush(self.timeout if timeout is None else timeout)
        self._closed = True
        await self._http.aclose()

    aclose = close

    async def __aenter__(self) -> AsyncThreadless:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncThreadless(base_url={self.base_url!r}, timeout={self.timeout:g})"
