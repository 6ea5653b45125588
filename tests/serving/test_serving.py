"""The web tier inside each process: which route runs where (threadless_site.asgi), the view threads
(serving.syncviews), the body limit and the GC tuning."""

from __future__ import annotations

import asyncio
import json
import os
import threading

import httpx
import pytest

from serving.syncviews import SyncViews, ViewThreads
from threadless_site.asgi import _sized, application, is_async_route, sync_application


def test_the_memory_api_and_the_console_run_on_the_thread_pool_and_conversations_stay_async():
    assert sync_application is not None  # THREADLESS_WEB_THREADS defaults to 8
    for path in (
        "/v1/memories",
        "/v1/memories/mem_x/decorate",
        "/v1/memories/mem_x/report",
        "/healthz",
        "/manage/",
        "/no/such/page",
    ):
        assert not is_async_route(path), path
    for path in (
        "/v1/agents/agt_x/conversations",
        "/v1/conversations/cv_x/say",
        "/v1/conversations/cv_x/turns/3/events",
    ):
        assert is_async_route(path), path


def test_a_body_without_content_length_stays_on_the_asgi_handler():
    chunked = {"method": "POST", "headers": [(b"transfer-encoding", b"chunked")]}
    sized = {"method": "POST", "headers": [(b"content-length", b"12")]}
    assert not _sized(chunked)
    assert _sized(sized)
    assert _sized({"method": "GET", "headers": []})


# --- serving.syncviews: Django's WSGI handler on the thread pool ------------------------


def _wsgi_echo(calls: list):
    def app(environ, start_response):
        body = environ["wsgi.input"].read()
        start_response("201 Created", [("Content-Type", "text/plain"), ("X-Seen", str(len(body)))])

        class Answer(list):
            def close(self):
                calls.append(("closed", threading.current_thread().name))

        return Answer([b"got ", body])

    return app


def _wsgi_stream(calls: list):
    class Stream:
        streaming = True

        def __iter__(self):
            yield b"one,"
            yield b"two"

        def close(self):
            calls.append(("closed", threading.current_thread().name))

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return Stream()

    return app


async def _call(
    app, *, body_parts: list[bytes], headers: list | None = None, future_send: bool = False
) -> list[dict]:
    incoming = [
        {"type": "http.request", "body": part, "more_body": i < len(body_parts) - 1}
        for i, part in enumerate(body_parts)
    ]
    sent: list[dict] = []

    async def receive():
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    def send_future(message):
        """As granian's `send`: an awaitable that is no coroutine."""
        sent.append(message)
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done

    size = sum(len(p) for p in body_parts)
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/x",
        "raw_path": b"/x",
        "query_string": b"",
        "root_path": "",
        "http_version": "1.1",
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 5),
        "headers": headers if headers is not None else [(b"content-length", str(size).encode())],
    }
    await app(scope, receive, send_future if future_send else send)
    return sent


async def test_a_sync_view_gets_the_whole_body_and_answers_in_one_piece_closed_on_its_thread():
    calls: list = []
    sent = await _call(SyncViews(_wsgi_echo(calls), 2, lambda: 100), body_parts=[b"ab", b"cd"])
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 201
    assert (b"x-seen", b"4") in sent[0]["headers"]
    assert sent[1:] == [{"type": "http.response.body", "body": b"got abcd", "more_body": False}]
    assert calls and calls[0][1].startswith("web")  # closed in the view's thread (per-thread DB connections)


@pytest.mark.parametrize("future_send", [False, True])
async def test_a_streaming_answer_is_sent_whole_and_closed_on_its_thread(future_send):
    calls: list = []
    sent = await _call(
        SyncViews(_wsgi_stream(calls), 2, lambda: 100), body_parts=[b""], future_send=future_send
    )
    assert b"".join(m["body"] for m in sent[1:]) == b"one,two"
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    assert calls and calls[0][1].startswith("web")


async def test_a_client_that_never_reads_a_stream_holds_no_view_thread():
    """One view thread, a streamed answer far larger than the spool's memory part, and a client
    whose `send` never completes: the next request is still answered on that one thread."""
    calls: list = []
    piece = b"x" * 65536

    def big_stream(environ, start_response):
        if environ["PATH_INFO"] != "/export":
            return _wsgi_echo(calls)(environ, start_response)
        start_response("200 OK", [("Content-Type", "application/x-ndjson")])

        class Stream:
            streaming = True

            def __iter__(self):
                return iter([piece] * 40)

            def close(self):
                calls.append(("stream closed", threading.current_thread().name))

        return Stream()

    app = SyncViews(big_stream, 1, lambda: 100)
    stuck = asyncio.Event()
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/export",
        "raw_path": b"/export",
        "query_string": b"",
        "root_path": "",
        "http_version": "1.1",
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 5),
        "headers": [],
    }

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def never_reads(message):
        if message["type"] == "http.response.body":
            stuck.set()
            await asyncio.Event().wait()

    reader = asyncio.create_task(app(scope, receive, never_reads))
    await asyncio.wait_for(stuck.wait(), 10)
    sent = await asyncio.wait_for(_call(app, body_parts=[b"ok"]), 10)
    assert sent[1]["body"] == b"got ok"
    assert ("stream closed", "web_0") in calls  # the view finished before the client read a byte
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader


async def test_the_view_threads_answer_in_the_callers_context_and_raise_its_errors_there():
    import asyncio
    import contextvars

    threads = ViewThreads(2, "web")
    where = contextvars.ContextVar("where")
    where.set("request")

    def seen(x):
        return where.get(), threading.current_thread().name, x

    def boom():
        raise ValueError("in the view")

    for i in range(10):  # one call at a time: one thread, as ThreadPoolExecutor would keep
        context, thread, value = await threads.run(seen, i)
        assert (context, thread, value) == ("request", "web_0", i)
    with pytest.raises(ValueError, match="in the view"):
        await threads.run(boom)
    # A request that goes away (cancelled) leaves the thread to finish; the next call is answered.
    gate = threading.Event()
    waiting = threads.run(gate.wait, 5)
    waiting.cancel()
    gate.set()
    results = await asyncio.gather(*(threads.run(seen, i) for i in range(20)))
    assert [r[2] for r in results] == list(range(20)) and {r[0] for r in results} == {"request"}
    running = list(threads._running)
    assert len(running) == 2
    threads.stop()  # what atexit does: the threads end once the calls handed over are done
    assert not any(thread.is_alive() for thread in running)


@pytest.mark.parametrize("declared", [True, False])
async def test_a_body_over_the_limit_is_413_before_the_view_runs(declared):
    calls: list = []
    parts = [b"x" * 60, b"y" * 60]
    headers = None if declared else [(b"content-length", b"10")]  # a length that lies: counted as read
    sent = await _call(SyncViews(_wsgi_echo(calls), 2, lambda: 100), body_parts=parts, headers=headers)
    assert sent[0]["status"] == 413
    assert json.loads(sent[1]["body"])["error"]["code"] == "payload_too_large"
    assert calls == []  # the WSGI app never ran


async def test_the_api_answers_its_error_shape_and_headers_through_the_asgi_app():
    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        no_key = await client.post(
            "/v1/memories/mem_x/decorate", json={"messages": []}, headers={"X-Request-Id": "req_fromclient1"}
        )
        too_large = await client.post(
            "/v1/memories/mem_x/decorate",
            content=b"{" + b" " * (2 * 1024 * 1024) + b"}",
            headers={"Content-Type": "application/json"},
        )
        missing = await client.get("/v1/no/such/route")
    assert no_key.status_code == 401
    assert no_key.headers["x-request-id"] == "req_fromclient1"
    assert set(no_key.json()["error"]) == {"code", "message", "hint", "request_id", "retryable"}
    assert no_key.json()["error"]["request_id"] == "req_fromclient1"
    assert too_large.status_code == 413 and too_large.json()["error"]["code"] == "payload_too_large"
    for answer in (no_key, too_large, missing):  # the security headers, whoever sent the answer
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.headers["x-frame-options"] == "DENY"
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(("value", "handlers"), [("0", []), ("1", ["console"])])
def test_the_access_logger_has_a_handler_only_when_the_access_log_is_on(value, handlers):
    code = (
        "import os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'threadless_site.settings'); "
        "from django.conf import settings; import json; "
        "print(json.dumps(settings.LOGGING['loggers']['uvicorn.access']['handlers']))"
    )
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "THREADLESS_ACCESS_LOG": value},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(out.strip().splitlines()[-1]) == handlers


async def test_the_server_process_tunes_the_garbage_collector_at_startup():
    import gc

    from serving import gctune
    from threadless_site import asgi

    messages = [{"type": "lifespan.startup"}]
    sent: list = []

    async def receive():
        return messages.pop(0) if messages else {"type": "lifespan.shutdown"}

    async def send(message):
        sent.append(message["type"])
        if message["type"] == "lifespan.startup.complete":
            assert gc.get_threshold()[0] >= gctune.YOUNG_THRESHOLD and gc.get_freeze_count() > 0
            gc.set_threshold(*before)  # this test process goes on with its own settings
            gc.unfreeze()

    before = gc.get_threshold()
    original = asgi.begin_shutdown

    async def no_shutdown():
        return None

    asgi.begin_shutdown = no_shutdown
    try:
        await asgi.application({"type": "lifespan"}, receive, send)
    finally:
        asgi.begin_shutdown = original
    assert sent == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
