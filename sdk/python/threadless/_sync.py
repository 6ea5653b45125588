"""Threadless: the synchronous client.

decorate never stops the agent on a service failure (it falls back to the local tail), report
never raises and runs in the background. Thread-safe: one httpx connection pool per client,
shared by every thread.
"""

from __future__ import annotations

import atexit
import builtins
import queue
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import datetime
from typing import Any
from urllib.request import getproxies

import httpx

from . import _base as b
from ._convert import from_anthropic, from_openai
from ._deadline import install as install_deadline
from ._errors import ThreadlessConnectionError, ThreadlessError, ThreadlessTimeoutError
from ._helpers import Entries, Facts, Files, Threads
from ._tail import TailStore
from ._types import DecoratedRequest, Memory, Page

__all__ = ["Threadless"]


class _DaemonPool:
    """A small thread pool of daemon threads.

    Daemon threads (unlike concurrent.futures') keep working while atexit handlers run, so the
    exit-time flush can still send queued reports, and a request abandoned at its deadline never
    holds up interpreter exit.
    """

    def __init__(self, max_workers: int, name: str) -> None:
        self._max = max_workers
        self._name = name
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._threads = 0
        self._closed = False

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        if self._closed:
            raise ThreadlessError("The client is closed.", code="client_closed", retryable=False)
        self._queue.put((future, fn, args))
        if not self._idle.acquire(blocking=False):
            with self._lock:
                if self._threads < self._max:
                    self._threads += 1
                    threading.Thread(
                        target=self._work, name=f"{self._name}-{self._threads}", daemon=True
                    ).start()
        return future

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, fn, args = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args))
                except BaseException as exc:  # handed to whoever waits on the future
                    future.set_exception(exc)
            del item, future, fn, args
            self._idle.release()

    def close(self) -> None:
        self._closed = True
        with self._lock:
            for _ in range(self._threads):
                self._queue.put(None)


class Threadless:
    """Memory for an LLM agent. See SPEC §8 / docs/sdk.md.

    ``timeout`` is a total deadline per call (connect + send + wait + read). ``tail_tokens`` and
    ``max_tails`` size the local tail. ``on_error(error, {"operation", "memory_id"})`` hears about
    every fallback and every failed report; without it they are logged on the ``threadless``
    logger.
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
        self._build()
        self._closed = False
        self.facts = Facts(self)
        self.entries = Entries(self)
        self.files = Files(self)
        self.threads = Threads(self)
        ref = weakref.ref(self)

        def flush_at_exit() -> None:
            client = ref()
            if client is not None:
                client._flush_at_exit()

        self._atexit = flush_at_exit
        atexit.register(self._atexit)
        b.reset_after_fork(self)

    def _build(self) -> None:
        """The connection pool, the worker threads and the report queue (again in a forked child)."""
        limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)
        transport = httpx.HTTPTransport(limits=limits)
        # The total deadline is enforced inside the socket calls (threadless._deadline). Behind an
        # environment proxy (whose transport httpx builds itself) each call runs on an I/O thread
        # instead, so the caller can stop waiting at the deadline.
        self._deadline = None if getproxies() else install_deadline(transport)
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=self._headers,
            timeout=httpx.Timeout(self.timeout),
            transport=transport,
            limits=limits,
        )
        self._io = _DaemonPool(64, "threadless-io")
        self._reports = _DaemonPool(8, "threadless-report")
        self._pending: dict[str, deque[Any]] = {}  # tail key -> reports queued or in flight, oldest first
        self._cond = threading.Condition()

    def _after_fork(self) -> None:
        """In a forked child (gunicorn --preload, multiprocessing, Celery prefork): the parent's
        sockets, worker threads and queued reports are not the child's. The parent still sends its
        own reports; the child starts with an empty queue, a new pool and new threads, and keeps
        the tails (so it can fall back to what the parent had seen)."""
        if self._closed:
            return
        self._tails.after_fork()
        self._build()

    @property
    def tail_tokens(self) -> int:
        return self._tails.tail_tokens

    @property
    def max_tails(self) -> int:
        return self._tails.max_tails

    # --- transport -------------------------------------------------------------------------------

    def _send(
        self, method: str, path: str, content: bytes | None, params: Any, headers: dict[str, Any] | None
    ) -> tuple[int, bytes, httpx.Headers]:
        try:
            response = self._http.request(method, path, content=content, params=params, headers=headers)
        except httpx.TimeoutException as exc:
            raise ThreadlessTimeoutError(
                f"{method} {path}: no answer within {self.timeout:g} s ({exc})."
            ) from exc
        except (httpx.HTTPError, OSError) as exc:
            raise ThreadlessConnectionError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        return response.status_code, response.content, response.headers

    def _request(
        self,
        method: str,
        path: str,
        *,
        content: bytes | None = None,
        params: Any = None,
        headers: dict[str, Any] | None = None,
    ) -> Any:
        """One HTTP call within the total deadline: the JSON answer, or ThreadlessError."""
        if self._closed:
            raise ThreadlessError("The client is closed.", code="client_closed", retryable=False)
        deadline = self._deadline
        if deadline is not None:
            deadline.at = time.monotonic() + self.timeout
            try:
                status, body, answer_headers = self._send(method, path, content, params, headers)
            finally:
                deadline.at = None
            return b.answer_json(status, body, answer_headers, self.base_url + path)
        # No deadline hook: run on an I/O thread and stop waiting exactly at the deadline (httpx's
        # own timeouts are per phase and per read, so a slow-dripping server could pass them).
        future = self._io.submit(self._send, method, path, content, params, headers)
        try:
            status, body, answer_headers = future.result(timeout=self.timeout)
        except FutureTimeout:
            future.cancel()
            raise ThreadlessTimeoutError(f"{method} {path}: no answer within {self.timeout:g} s.") from None
        return b.answer_json(status, body, answer_headers, self.base_url + path)

    # --- decorate and report ---------------------------------------------------------------------

    def decorate(
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
        """The full model request for ``messages``. Falls back to the local tail when the service
        cannot answer (network error, timeout, 5xx, 429, 408); raises ThreadlessError on other 4xx.

        Name the memory by ``memory_id`` or by ``external_id=`` (your own id: the memory is created
        on first use, and the local tail is keyed by it, so a new user's first turn needs no create
        call and still gets an answer during an outage). ``thread=`` names the conversation (your
        own id, created on first use; None: the memory's default thread): the window is that
        thread's, facts and recall the whole memory's, and the local tail is the thread's own.
        """
        key, base_path = b.target(memory_id, external_id, thread)
        messages = b.as_messages(messages)
        content = b.encode(b.decorate_body(messages, instructions, budget_tokens, recall, store, thread))
        self._wait_for_reports(key, b.REPORT_WAIT_SECONDS)
        seq = self._tails.next_seq()
        try:
            try:
                data = self._request(
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
            b.call_on_error(
                self.on_error, error, b.error_context("decorate", request.memory_id, external_id, thread)
            )
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
    ) -> None:
        """Send what came after decorate (the reply, tool calls and results) in the background.

        Never raises and is not retried; a failure goes to on_error. Skipped (silently) after a
        degraded decorate in the same thread, until the next successful one there. ``external_id=``
        instead of ``memory_id`` names the memory by your own id (get-or-create); ``thread=`` the
        conversation, as on decorate.
        """
        context = b.error_context("report", memory_id, external_id, thread)
        try:
            key, base_path = b.target(memory_id, external_id, thread)
            messages = b.as_messages(messages)
            if self._tails.is_degraded(key):
                return  # its user message was never stored: nothing to attach the reply to
            body = b.report_body(messages, failures, thread)
            job = (base_path + "/report", b.encode(body), b.json_headers(idempotency_key), messages, context)
            with self._cond:
                jobs = self._pending.get(key)
                start = jobs is None
                if jobs is None:
                    jobs = self._pending[key] = deque()
                jobs.append(job)
            if start:
                try:
                    self._reports.submit(self._drain, key)
                except BaseException:
                    with self._cond:
                        self._pending.pop(key, None)
                        self._cond.notify_all()
                    raise
        except Exception as error:
            b.call_on_error(self.on_error, error, context)

    def report_openai(
        self,
        memory_id: str | None = None,
        completion: Any = None,
        *,
        external_id: str | None = None,
        thread: str | None = None,
        failures: Sequence[Mapping[str, Any]] | None = None,
        idempotency_key: str | None = None,
    ) -> None:
        """report() for OpenAI's answer as it is: a ``ChatCompletion`` (its first choice), a
        ``ChatCompletionMessage``, or their dicts. Never raises (a shape it cannot read goes to
        on_error)."""
        try:
            messages = from_openai(completion)
        except Exception as error:
            b.call_on_error(self.on_error, error, b.error_context("report", memory_id, external_id, thread))
            return
        self.report(
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
    ) -> None:
        """report() for Anthropic's ``Message`` as it is (text blocks become the content, tool_use
        blocks tool calls, thinking blocks are left out). Never raises."""
        try:
            messages = from_anthropic(message)
        except Exception as error:
            b.call_on_error(self.on_error, error, b.error_context("report", memory_id, external_id, thread))
            return
        self.report(
            memory_id,
            messages,
            external_id=external_id,
            thread=thread,
            failures=failures,
            idempotency_key=idempotency_key,
        )

    def _drain(self, key: str) -> None:
        # Reports in one thread go out one at a time, in order; other threads run in parallel.
        while True:
            with self._cond:
                jobs = self._pending[key]
                path, content, headers, messages, context = jobs[0]
            try:
                self._request("POST", path, content=content, headers=headers)
                self._tails.append(key, messages)
            except Exception as error:
                b.call_on_error(self.on_error, error, context)
            with self._cond:
                jobs.popleft()
                if not jobs:
                    del self._pending[key]
                    self._cond.notify_all()
                    return

    def _wait_for_reports(self, key: str, timeout: float) -> None:
        if key in self._pending:
            with self._cond:
                self._cond.wait_for(lambda: key not in self._pending, timeout)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for reports still queued or in flight. True when none is left."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending, timeout)

    def _flush_at_exit(self) -> None:
        if not self._closed and self._pending:
            self.flush(self.timeout + 1)

    # --- memories ----------------------------------------------------------------------------------

    def create(
        self,
        *,
        metadata: Mapping[str, Any] | None = None,
        external_id: str | None = None,
        instructions: str | None = None,
        policy: Mapping[str, Any] | None = None,
    ) -> Memory:
        """A new memory (or, with an ``external_id`` already used in this project, that one)."""
        body = b.memory_fields(metadata, external_id, instructions, policy)
        return Memory.from_json(
            self._request("POST", "/memories", content=b.encode(body), headers=b.json_headers())
        )

    def get(self, memory_id: str | None = None, *, external_id: str | None = None) -> Memory:
        """A memory by its id or by ``external_id=`` (reading creates none: a 404 ``not_found``)."""
        return Memory.from_json(self._request("GET", self._memory_path(memory_id, external_id)))

    def update(
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
            self._request(
                "PATCH",
                self._memory_path(memory_id, external_id),
                content=b.encode(body),
                headers=b.json_headers(),
            )
        )

    def delete(self, memory_id: str | None = None, *, external_id: str | None = None) -> None:
        """Delete the memory and everything derived from it (entries, facts, digests, the tails here)."""
        path = self._memory_path(memory_id, external_id)
        self._request("DELETE", path)
        for key in b.memory_keys(path, external_id):
            self._tails.forget_memory(key)

    def list(
        self,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        external_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Page:
        return b.memory_page(
            self._request("GET", "/memories", params=b.list_params(limit, cursor, external_id, metadata))
        )

    def delete_matching(
        self, *, metadata: Mapping[str, Any] | None = None, external_id: str | None = None
    ) -> dict[str, Any]:
        """Delete every memory matching the filters (at least one); answers the receipt's counts."""
        data = self._request("DELETE", "/memories", params=b.list_params(None, None, external_id, metadata))
        deleted: dict[str, Any] = data.get("deleted", {})
        return deleted

    # --- search ---------------------------------------------------------------------------------------

    def search(
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
        """The memory's messages matching ``query``, best first: every thread's, or ``thread``'s.
        Each hit has ``type`` (``"message"``), ``thread``, ``seq``, ``role``, ``created_at``,
        ``snippet``, ``score``. Narrowed by ``role`` (``"user"`` / ``"assistant"``), ``after`` (at or
        after) / ``before`` (strictly before; aware ``datetime`` or ISO 8601 with its offset) and
        ``min_score``. ``include=["messages", "facts"]`` ranks the memory's facts with the messages
        (a fact hit: ``type`` ``"fact"``, ``id``, ``text``, … as ``client.facts.list`` lists them, and
        ``score``). By an external id no memory has yet: no hits (nothing is created)."""
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
        path = self._read_path(memory_id, external_id)
        if path is None:
            return []
        data = self._request("POST", path + "/search", content=b.encode(body), headers=b.json_headers())
        return data.get("data") or []

    # --- history import ------------------------------------------------------------------------------

    def import_messages(
        self,
        memory_id: str | None = None,
        messages: Sequence[Mapping[str, Any]] | None = None,
        *,
        external_id: str | None = None,
        thread: str | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Append a conversation's existing history to ``thread`` (default: the memory's own), each
        message keeping its ``created_at`` (an aware ``datetime`` or ISO 8601 with its offset;
        absent: now), oldest first, at most 2,000 a call. Answers ``{"accepted", "thread",
        "turns": [first, last]}`` once stored; facts and recall follow in the background.

        Not a model call: it never falls back, and every error raises ThreadlessError (all or
        nothing: on a 400 nothing was stored). ``external_id=`` creates the memory on first use.
        """
        _, base_path = b.target(memory_id, external_id, thread)
        content = b.encode(b.import_body(messages, thread))
        answer: dict[str, Any] = self._request(
            "POST", base_path + "/messages", content=content, headers=b.json_headers(idempotency_key)
        )
        return answer

    def _memory_path(self, memory_id: str | None, external_id: str | None) -> str:
        """``_read_path``, where an external id no memory has yet is a 404 ``not_found``."""
        path = self._read_path(memory_id, external_id)
        if path is None:
            raise b.no_memory(str(external_id))
        return path

    def _read_path(self, memory_id: str | None, external_id: str | None) -> str | None:
        """The path of a memory to read, by id or by external id (looked up, never created: None
        when no memory has it yet)."""
        _, path = b.target(memory_id, external_id)
        if external_id is None:
            return path
        found = self.list(external_id=external_id, limit=1).data
        return b.path_of(found[0].id) if found else None

    # --- lifecycle ---------------------------------------------------------------------------------

    def close(self, timeout: float | None = None) -> None:
        """Wait for outstanding reports (up to ``timeout``, default the client's), then close the pool."""
        if self._closed:
            return
        self.flush(self.timeout if timeout is None else timeout)
        self._closed = True
        atexit.unregister(self._atexit)
        self._io.close()
        self._reports.close()
        self._http.close()

    def __enter__(self) -> Threadless:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Threadless(base_url={self.base_url!r}, timeout={self.timeout:g})"
