"""AsyncThreadless: the asyncio client, same behaviour as Threadless.

Task-safe within one event loop: one httpx.AsyncClient (one connection pool) shared by every
task. report schedules a task and returns it at once; ``await client.flush()`` (or ``async with``)
before the loop ends, since there is no interpreter-exit hook for a loop that is gone.
"""

from __future__ import annotations

import asyncio
import builtins
import inspect
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import httpx

from . import _base as b
from ._convert import from_anthropic, from_openai
from ._errors import ThreadlessConnectionError, ThreadlessError, ThreadlessTimeoutError
from ._helpers import AsyncEntries, AsyncFacts, AsyncFiles, AsyncThreads
from ._tail import TailStore
from ._types import DecoratedRequest, Memory, Page

__all__ = ["AsyncThreadless"]

_timeout = getattr(asyncio, "timeout", None)


class AsyncThreadless:
    """The asyncio twin of :class:`threadless.Threadless` (same constructor, awaitable methods).

    ``on_error`` may be a plain function or a coroutine function.
    """

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 15.0,
        tail_tokens: int = 60_000,
        max_tails: int = 200,
        on_error: b.OnError | None = None,
    ) -> None:
        api_key, self.base_url = b.resolve_config(api_key, base_url, timeout, tail_tokens, max_tails)
        self.timeout = float(timeout)
        self.on_error = on_error
        self._tails = TailStore(tail_tokens=tail_tokens, max_tails=max_tails)
        self._headers = b.default_headers(api_key)
        # The connection pool belongs to one event loop; it is built on first use and rebuilt when
        # a call comes from another loop (a second asyncio.run(), a forked child): see _client().
        self._http: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._latest: dict[str, asyncio.Task[Any]] = {}  # tail key -> its newest report task
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False
        self.facts = AsyncFacts(self)
        self.entries = AsyncEntries(self)
        self.files = AsyncFiles(self)
        self.threads = AsyncThreads(self)
        b.reset_after_fork(self)

    @property
    def tail_tokens(self) -> int:
        return self._tails.tail_tokens

    @property
    def max_tails(self) -> int:
        return self._tails.max_tails

    # --- transport -------------------------------------------------------------------------------

    def _on_loop(self) -> asyncio.AbstractEventLoop:
        """The running loop; on a loop change, drop what belonged to the old one.

        httpx's pool (its sockets, its locks) is tied to the loop that opened it: used from a later
        loop (each asyncio.run() makes a new one) it raises "Event loop is closed". So on a loop
        change the pool is rebuilt on next use, and report tasks of the old loop are forgotten
        (that loop is gone, or no longer ours to wait on).
        """
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            previous, old = self._loop, self._http
            self._loop, self._http = loop, None
            lost = [t for t in self._tasks if t.get_loop() is not loop and not t.done()]
            self._tasks = {t for t in self._tasks if t.get_loop() is loop}
            self._latest = {k: t for k, t in self._latest.items() if t.get_loop() is loop}
            if lost:
                b.log.warning(
                    "threadless: %d report(s) of an earlier event loop never finished (await flush() "
                    "before the loop ends)",
                    len(lost),
                )
            if (
                old is not None
                and previous is not None
                and previous.is_running()
                and not previous.is_closed()
            ):
                try:  # the old loop lives on (another thread): let it close its own pool
                    asyncio.run_coroutine_threadsafe(old.aclose(), previous)
                except RuntimeError:
                    pass
        return loop

    def _client(self) -> httpx.AsyncClient:
        """The connection pool of the running event loop (built on first use there)."""
        self._on_loop()
        if self._http is None:
            self._http = httpx.AsyncClient(
                base_url=self.base_url,
                headers=self._headers,
                timeout=httpx.Timeout(self.timeout),
                limits=httpx.Limits(max_connections=100, max_keepalive_connections=20),
            )
        return self._http

    def _after_fork(self) -> None:
        """In a forked child: the parent's pool, loop and report tasks are not ours to use."""
        self._http = None
        self._loop = None
        self._tasks = set()
        self._latest = {}
        self._tails.after_fork()

    async def _send(
        self, method: str, path: str, content: bytes | None, params: Any, headers: dict[str, Any] | None
    ) -> tuple[int, bytes, httpx.Headers]:
        response = await self._client().request(method, path, content=content, params=params, headers=headers)
        return response.status_code, response.content, response.headers

    async def _request(
        self,
        method: str,
        path: str,
        *,
        content: bytes | None = None,
        params: Any = None,
        headers: dict[str, Any] | None = None,
    ) -> Any:
        """One HTTP call within the total deadline (cancelled when it passes)."""
        if self._closed:
            raise ThreadlessError("The client is closed.", code="client_closed", retryable=False)
        try:
            if _timeout is not None:  # 3.11+: no extra task per call
                async with _timeout(self.timeout):
                    status, body, answer_headers = await self._send(method, path, content, params, headers)
            else:
                status, body, answer_headers = await asyncio.wait_for(
                    self._send(method, path, content, params, headers), self.timeout
                )
        except (asyncio.TimeoutError, httpx.TimeoutException) as exc:  # noqa: UP041 (differs on 3.10)
            raise ThreadlessTimeoutError(f"{method} {path}: no answer within {self.timeout:g} s.") from exc
        except (httpx.HTTPError, OSError) as exc:
            raise ThreadlessConnectionError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        return b.answer_json(status, body, answer_headers, self.base_url + path)

    async def _notify(self, error: BaseException, context: dict[str, Any]) -> None:
        result = b.call_on_error(self.on_error, error, context)
        if inspect.isawaitable(result):
            try:
                await result
            except Exception:
                b.log.exception(
                    "threadless: on_error raised while handling %s on %s; ignored",
                    context.get("operation"),
                    context.get("memory_id"),
                )

    # --- decorate and report ---------------------------------------------------------------------

    async def decorate(
        self,
        memory_id: str | None = None,
        messages: Sequence[Mapping[str, Any]] | None = None,
        instructions: str | None = None,
        *,
        external_id: str | None = None,
        thread: str | None = None,
        budget_tokens: int | None = None,
        recall: bool | None = None,
        store: bool | None = None,
        idempotency_key: str | None = None,
    ) -> DecoratedRequest:
        """See :meth:`threadless.Threadless.decorate`."""
        key, base_path = b.target(memory_id, external_id, thread)
        messages = b.as_messages(messages)
        content = b.encode(b.decorate_body(messages, instructions, budget_tokens, recall, store, thread))
        seq = self._tails.next_seq()
        try:
            try:
                self._on_loop()
                pending = self._latest.get(key)
                if pending is not None and not pending.done():
                    await asyncio.wait({pending}, timeout=b.REPORT_WAIT_SECONDS)
                data = await self._request(
                    "POST", base_path + "/decorate", content=content, headers=b.json_headers(idempotency_key)
                )
                request = b.decorated_from(memory_id, data, 200, {}, external_id, thread)
            except ThreadlessError:
                raise
            except Exception as exc:  # a bug below us must not stop the agent either
                raise b.unexpected(exc, "POST " + base_path + "/decorate") from exc
        except ThreadlessError as error:
            if not b.should_fall_back(error):
                raise
            request = b.degraded_request(
                self._tails, key, messages, instructions, error, seq, memory_id, external_id, thread
            )
            await self._notify(error, b.error_context("decorate", request.memory_id, external_id, thread))
            return request
        b.refresh_tail(self._tails, key, request, store, seq)
        return request

    def report(
        self,
        memory_id: str | None = None,
        messages: Sequence[Mapping[str, Any]] | None = None,
        *,
        external_id: str | None = None,
        thread: str | None = None,
        failures: Sequence[Mapping[str, Any]] | None = None,
        idempotency_key: str | None = None,
    ) -> asyncio.Task[Any] | None:
        """Schedule the report and return at once (a plain call, no await needed).

        Returns the background task (awaiting it waits for the send and never raises), or None
        when the report was skipped or could not be scheduled (then on_error was told).
        """
        context = b.error_context("report", memory_id, external_id, thread)
        try:
            key, base_path = b.target(memory_id, external_id, thread)
            messages = b.as_messages(messages)
            if self._tails.is_degraded(key):
                return None  # its user message was never stored: nothing to attach the reply to
            content = b.encode(b.report_body(messages, failures, thread))
            loop = self._on_loop()  # before the coroutine exists, so none is left un-awaited
            previous = self._latest.get(key)
            task = loop.create_task(
                self._report_job(
                    previous,
                    key,
                    base_path + "/report",
                    content,
                    b.json_headers(idempotency_key),
                    messages,
                    context,
                )
            )
        except Exception as error:
            result = b.call_on_error(self.on_error, error, context)
            if inspect.iscoroutine(result):
                result.close()  # no loop to run it on
            return None
        self._latest[key] = task
        self._tasks.add(task)
        task.add_done_callback(lambda t: self._report_done(key, t, context))
        return task

    def report_openai(
        self,
        memory_id: str | None = None,
        completion: Any = None,
        *,
        external_id: str | None = None,
        thread: str | None = None,
        failures: Sequence[Mapping[str, Any]] | None = None,
        idempotency_key: str | None = None,
    ) -> asyncio.Task[Any] | None:
        """See :meth:`threadless.Threadless.report_openai`."""
        try:
            messages = from_openai(completion)
        except Exception as error:
            b.call_on_error(self.on_error, error, b.error_context("report", memory_id, external_id, thread))
            return None
        return self.report(
            memory_id,
            messages,
            external_id=external_id,
            thread=thread,
            failures=failures,
            idempotency_key=idempotency_key,
        )

    def report_anthropic(
        self,
        memory_id: str | None = None,
        message: Any = None,
        *,
        external_id: str | None = None,
        thread: str | None = None,
        failures: Sequence[Mapping[str, Any]] | None = None,
        idempotency_key: str | None = None,
    ) -> asyncio.Task[Any] | None:
        """See :meth:`threadless.Threadless.report_anthropic`."""
        try:
            messages = from_anthropic(message)
        except Exception as error:
            b.call_on_error(self.on_error, error, b.error_context("report", memory_id, external_id, thread))
            return None
        return self.report(
            memory_id,
            messages,
            external_id=external_id,
            thread=thread,
            failures=failures,
            idempotency_key=idempotency_key,
        )

    async def _report_job(
        self,
        previous: asyncio.Task[Any] | None,
        key: str,
        path: str,
        content: bytes,
        headers: dict[str, Any],
        messages: list[Any],
        context: dict[str, Any],
    ) -> None:
        # Reports in one thread go out one at a time, in order; other threads run concurrently.
        if previous is not None and not previous.done():
            await asyncio.wait({previous})
        try:
            await self._request("POST", path, content=content, headers=headers)
            self._tails.append(key, messages)
        except Exception as error:
            await self._notify(error, context)

    def _report_done(self, key: str, task: asyncio.Task[Any], context: dict[str, Any]) -> None:
        self._tasks.discard(task)
        if self._latest.get(key) is task:
            del self._latest[key]
        if task.cancelled():
            # Not lost silently: typically asyncio.run() ended (cancelling its tasks) before the send.
            error = ThreadlessError(
                "The report was cancelled before it was sent (its event loop ended, or its task was "
                "cancelled).",
                code="report_cancelled",
                retryable=False,
                hint="await memory.flush() (or use `async with`) before the event loop ends.",
            )
            result = b.call_on_error(self.on_error, error, context)
            if inspect.iscoroutine(result):
                try:
                    task.get_loop().create_task(result)
                except RuntimeError:  # the loop is closed: nowhere to run an async on_error
                    result.close()
        elif task.exception() is not None:  # not expected: _report_job catches
            b.log.error("threadless: report task failed", exc_info=task.exception())

    async def flush(self, timeout: float | None = None) -> bool:
        """Wait for reports still queued or in flight. True when none is left."""
        self._on_loop()
        while self._tasks:
            done, pending = await asyncio.wait(set(self._tasks), timeout=timeout)
            if pending:
                return False
        return True

    # --- memories ----------------------------------------------------------------------------------

    async def create(
        self,
        *,
        metadata: Mapping[str, Any] | None = None,
        external_id: str | None = None,
        instructions: str | None = None,
        policy: Mapping[str, Any] | None = None,
    ) -> Memory:
        body = b.memory_fields(metadata, external_id, instructions, policy)
        return Memory.from_json(
            await self._request("POST", "/memories", content=b.encode(body), headers=b.json_headers())
        )

    async def get(self, memory_id: str | None = None, *, external_id: str | None = None) -> Memory:
        """See :meth:`threadless.Threadless.get`."""
        return Memory.from_json(await self._request("GET", await self._memory_path(memory_id, external_id)))

    async def update(
        self,
        memory_id: str | None = None,
        *,
        external_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        instructions: str | None = None,
        policy: Mapping[str, Any] | None = None,
    ) -> Memory:
        body = b.memory_fields(metadata, None, instructions, policy)
        return Memory.from_json(
            await self._request(
                "PATCH",
                await self._memory_path(memory_id, external_id),
                content=b.encode(body),
                headers=b.json_headers(),
            )
        )

    async def delete(self, memory_id: str | None = None, *, external_id: str | None = None) -> None:
        """See :meth:`threadless.Threadless.delete`."""
        path = await self._memory_path(memory_id, external_id)
        await self._request("DELETE", path)
        for key in b.memory_keys(path, external_id):
            self._tails.forget_memory(key)

    async def list(
        self,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        external_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Page:
        return b.memory_page(
            await self._request(
                "GET", "/memories", params=b.list_params(limit, cursor, external_id, metadata)
            )
        )

    async def delete_matching(
        self, *, metadata: Mapping[str, Any] | None = None, external_id: str | None = None
    ) -> dict[str, Any]:
        data = await self._request(
            "DELETE", "/memories", params=b.list_params(None, None, external_id, metadata)
        )
        deleted: dict[str, Any] = data.get("deleted", {})
        return deleted

    async def search(
        self,
        memory_id: str | None = None,
        query: str | None = None,
        *,
        external_id: str | None = None,
        thread: str | None = None,
        limit: int | None = None,
        role: str | None = None,
        after: datetime | str | None = None,
        before: datetime | str | None = None,
        min_score: float | None = None,
        include: Sequence[str] | None = None,
    ) -> builtins.list[dict[str, Any]]:
        """See :meth:`threadless.Threadless.search`."""
        body = b.search_body(
            query,
            limit,
            thread,
            role=role,
            after=after,
            before=before,
            min_score=min_score,
            include=include,
        )
        path = await self._read_path(memory_id, external_id)
        if path is None:
            return []
        data = await self._request("POST", path + "/search", content=b.encode(body), headers=b.json_headers())
        return data.get("data") or []

    # --- history import ------------------------------------------------------------------------------

    async def import_messages(
        self,
        memory_id: str | None = None,
        messages: Sequence[Mapping[str, Any]] | None = None,
        *,
        external_id: str | None = None,
        thread: str | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """See :meth:`threadless.Threadless.import_messages` (raises, never falls back)."""
        _, base_path = b.target(memory_id, external_id, thread)
        content = b.encode(b.import_body(messages, thread))
        answer: dict[str, Any] = await self._request(
            "POST", base_path + "/messages", content=content, headers=b.json_headers(idempotency_key)
        )
        return answer

    async def _memory_path(self, memory_id: str | None, external_id: str | None) -> str:
        """``_read_path``, where an external id no memory has yet is a 404 ``not_found``."""
        path = await self._read_path(memory_id, external_id)
        if path is None:
            raise b.no_memory(str(external_id))
        return path

    async def _read_path(self, memory_id: str | None, external_id: str | None) -> str | None:
        """See :meth:`threadless.Threadless._read_path`."""
        _, path = b.target(memory_id, external_id)
        if external_id is None:
            return path
        found = (await self.list(external_id=external_id, limit=1)).data
        return b.path_of(found[0].id) if found else None

    # --- lifecycle ---------------------------------------------------------------------------------

    async def close(self, timeout: float | None = None) -> None:
        """Wait for outstanding reports (up to ``timeout``, default the client's), then close the pool."""
        if self._closed:
            return
        await self.flush(self.timeout if timeout is None else timeout)
        self._closed = True
        http, self._http = self._http, None
        if http is not None and self._loop is asyncio.get_running_loop():
            await http.aclose()

    aclose = close

    async def __aenter__(self) -> AsyncThreadless:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"AsyncThreadless(base_url={self.base_url!r}, timeout={self.timeout:g})"
