"""Sync views under ASGI: Django's WSGI handler on a fixed pool of threads, one hand-off each way.

The event loop reads the whole body first (only requests with a Content-Length come here, and the
body limit holds while it reads), a view thread runs Django and hands back the whole answer, and
the loop sends it. A streaming answer (a sync iterator: an export, a static file) is written by the
thread into a spooled file (memory up to SPOOL_IN_MEMORY, then a private temporary file) and sent
from there by the loop: a view thread never waits on a client, so one that reads slowly or not at
all holds a socket and a file, never one of the few threads every sync route of the process needs
(Django's own ASGI handler buffers a sync stream whole for the same reason). The environ is
a2wsgi's `build_environ`.

The hand-off is a queue of (loop future, function) the view threads take from, and the answer goes
back with one `call_soon_threadsafe`: no concurrent Future, executor semaphore or per-call signature
check on the event loop's side. Under plain ASGI Django runs every sync view of a process on one
thread; here a process has up to THREADLESS_WEB_THREADS requests in flight while they wait on the
database. The response is closed in the view's thread (Django's request_finished: per-thread
connections). THREADLESS_WEB_THREADS=0 turns it off (threadless_site.asgi).
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import io
import queue
import tempfile
import threading

from a2wsgi.wsgi import build_environ

from serving.bodylimit import send_too_large

SPOOL_IN_MEMORY = 1 << 20  # a streamed answer up to this size never touches the disk
SEND_PIECE = 1 << 16  # a streamed answer goes out in pieces of this size


def _declared_length(scope) -> int:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else -1
    return 0


def _headers(pairs) -> list[tuple[bytes, bytes]]:
    return [
        (name.strip().lower().encode("latin-1"), value.strip().encode("latin-1")) for name, value in pairs
    ]


async def _send_spooled(spool, send) -> None:
    """A spooled body, piece by piece, at the client's pace. Each piece is read on the loop's
    default executor (the spool may be on disk), never on a view thread."""
    loop = asyncio.get_running_loop()
    while True:
        piece = await loop.run_in_executor(None, spool.read, SEND_PIECE)
        await send({"type": "http.response.body", "body": piece, "more_body": bool(piece)})
        if not piece:
            return


def _deliver(future: asyncio.Future, ok: bool, value) -> None:
    """On the event loop: a view thread's outcome into its future (unless the request was cancelled)."""
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class ViewThreads:
    """`threads` threads running calls handed over from an event loop, each answered through the
    loop's own future. Threads start as needed (none free), up to `threads`. At exit, as
    ThreadPoolExecutor's threads are, they finish what was handed to them before the interpreter
    goes (atexit: a stop per thread, then each joined)."""

    def __init__(self, threads: int, name: str = "web") -> None:
        self.threads = max(1, threads)
        self.name = name
        self._work: queue.SimpleQueue = queue.SimpleQueue()
        self._running: list[threading.Thread] = []
        self._idle = 0  # threads free for a call not yet handed over (under _lock)
        self._lock = threading.Lock()
        self._exit_registered = False

    def _more(self) -> threading.Thread:
        """One thread more, not started yet (called under _lock)."""
        thread = threading.Thread(target=self._serve, name=f"{self.name}_{len(self._running)}", daemon=True)
        self._running.append(thread)
        if not self._exit_registered:
            atexit.register(self.stop)
            self._exit_registered = True
        return thread

    def stop(self) -> None:
        """Let the threads finish the calls handed over so far, then end them."""
        running, self._running = self._running, []
        for _ in running:
            self._work.put(None)
        for thread in running:
            thread.join()

    def _serve(self) -> None:
        work, lock = self._work, self._lock
        while True:
            item = work.get()
            if item is None:
                return
            loop, future, context, function, args = item
            try:
                value, ok = context.run(function, *args), True
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting request, raised there
                value, ok = exc, False
            with lock:  # free from now on: the answer's next call may count on this thread
                self._idle += 1
            try:
                loop.call_soon_threadsafe(_deliver, future, ok, value)
            except RuntimeError:  # the loop closed meanwhile: nobody is waiting
                pass
            del item, loop, future, context, function, args, value

    def run(self, function, *args) -> asyncio.Future:
        """A future of `function(*args)` run on one of the threads, in the caller's context."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        # As ThreadPoolExecutor grows: an idle thread is taken for this call (so two calls in a row
        # never count on the same one), else a thread more, up to `threads`, else the call waits
        # for the next thread free. A lightly used process keeps to a few threads, and so to a
        # few database connections.
        new = None
        with self._lock:
            if self._idle:
                self._idle -= 1
            elif len(self._running) < self.threads:
                new = self._more()
        self._work.put((loop, future, contextvars.copy_context(), function, args))
        if new is not None:
            new.start()
        return future


class SyncViews:
    """An ASGI app running a WSGI app (Django's) on `threads` threads; `limit()` is the body limit."""

    def __init__(self, app, threads: int, limit) -> None:
        self.app = app
        self.limit = limit
        self.executor = ViewThreads(threads, "web")

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
        return await self.executor.run(function, *args)

    async def __call__(self, scope, receive, send) -> None:
        body = await self.read_body(scope, receive, send)
        if body is None:
            return
        environ = build_environ(scope, io.BytesIO(body))
        start, answer = await self.run(self._respond, environ)
        await send(start)
        if isinstance(answer, bytes):
            await send({"type": "http.response.body", "body": answer, "more_body": False})
            return
        try:
            await _send_spooled(answer, send)
        finally:
            answer.close()

    def _respond(self, environ):
        """In a thread: the WSGI call. The start message and the whole body, or a spooled file
        holding a streamed body (rewound, for the loop to send and close)."""
        started = {}

        def start_response(status, headers, exc_info=None):
            started["start"] = {
                "type": "http.response.start",
                "status": int(status.split(" ", 1)[0]),
                "headers": _headers(headers),
            }
            return self._no_write

        iterable = self.app(environ, start_response)
        try:
            if not getattr(iterable, "streaming", False):
                return started["start"], b"".join(iterable)
            spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)
            try:
                for chunk in iterable:
                    spool.write(chunk)
                spool.seek(0)
            except BaseException:
                spool.close()
                raise
            return started["start"], spool
        finally:
            close = getattr(iterable, "close", None)
            if close is not None:
                close()

    @staticmethod
    def _no_write(data: bytes) -> None:
        raise NotImplementedError("Django never calls the WSGI write() callable")
