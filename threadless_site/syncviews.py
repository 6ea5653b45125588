"""Sync views under ASGI: Django's WSGI handler on a fixed pool of threads, one hand-off each way.

a2wsgi's WSGIMiddleware (used here before) streams both ways: the view's thread pulls the body
from the event loop and pushes the status, each part of the answer and its end back, waiting on
the loop each time (four waits for a small request). Here the event loop reads the whole body
first (only requests with a Content-Length come here, and the body limit holds while it reads),
the thread runs Django and hands back the whole answer, and the loop sends it: one hand-off each
way. A streaming answer (a sync iterator, e.g. a static file) is still sent part by part as the
thread produces it. The environ is a2wsgi's `build_environ`.

The response is closed in the view's thread (Django's request_finished: per-thread connections).
"""

from __future__ import annotations

import asyncio
import contextvars
import io
from concurrent.futures import ThreadPoolExecutor

from a2wsgi.wsgi import build_environ

from threadless_site.bodylimit import send_too_large


def _declared_length(scope) -> int:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else -1
    return 0


def _headers(pairs) -> list[tuple[bytes, bytes]]:
    return [(name.strip().lower().encode("latin-1"), value.strip().encode("latin-1")) for name, value in pairs]


class SyncViews:
    """An ASGI app running a WSGI app (Django's) on `threads` threads; `limit()` is the body limit."""

    def __init__(self, app, threads: int, limit) -> None:
        self.app = app
        self.limit = limit
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="web")

    async def read_body(self, scope, receive, send) -> bytes | None:
        """The whole request body, or None once a 413 is sent (or the client went away)."""
        limit = self.limit()
        declared = _declared_length(scope)
        if declared > limit:
            await send_too_large(send, scope, limit)
            return None
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await send_too_large(send, scope, limit)
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def run(self, function, *args):
        """`function(*args)` on one of the view threads (in this request's context)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, contextvars.copy_context().run, function, *args)

    async def __call__(self, scope, receive, send) -> None:
        body = await self.read_body(scope, receive, send)
        if body is None:
            return
        environ = build_environ(scope, io.BytesIO(body))
        loop = asyncio.get_running_loop()
        answer = await self.run(self._respond, environ, loop, send)
        if answer is not None:  # not streamed: the whole answer, sent from here
            start, body = answer
            await send(start)
            await send({"type": "http.response.body", "body": body, "more_body": False})

    def _respond(self, environ, loop, send):
        """In a thread: the WSGI call. The whole answer, or None once a streamed one is sent."""
        started = {}

        def start_response(status, headers, exc_info=None):
            started["start"] = {"type": "http.response.start", "status": int(status.split(" ", 1)[0]),
                                "headers": _headers(headers)}
            return self._no_write

        iterable = self.app(environ, start_response)
        try:
            if not getattr(iterable, "streaming", False):
                return started["start"], b"".join(iterable)

            def push(message) -> None:
                asyncio.run_coroutine_threadsafe(send(message), loop).result()

            push(started["start"])
            for chunk in iterable:
                if chunk:
                    push({"type": "http.response.body", "body": chunk, "more_body": True})
            push({"type": "http.response.body", "body": b"", "more_body": False})
            return None
        finally:
            close = getattr(iterable, "close", None)
            if close is not None:
                close()

    @staticmethod
    def _no_write(data: bytes) -> None:
        raise NotImplementedError("Django never calls the WSGI write() callable")
