"""The proxy's model calls past Django's request cycle (serving.proxyroutes): the ASGI entry point
sends them to the same view code, and what a client gets is what Django's way answers."""

from __future__ import annotations

import asyncio
import re

import httpx
import orjson
import pytest

from harness.proxy_stubs import ProviderStub
from proxy import views
from proxy.messages import MESSAGES as MESSAGES_PROTOCOL
from proxy.protocols import OPENAI
from proxy.responses import RESPONSES
from proxy.upstream import project_calls_open
from serving import proxyroutes
from serving.syncviews import SyncViews
from threadless_site import asgi

CHAT = "/v1/openai/chat/completions"
RESPONSES_PATH = "/v1/openai/responses"
MESSAGES = "/v1/anthropic/v1/messages"
ASK = {"model": "m", "messages": [{"role": "user", "content": "Hello?"}]}


@pytest.fixture(scope="module")
def upstream():
    stub = ProviderStub()
    yield stub
    stub.close()


@pytest.fixture(autouse=True)
def _loopback_egress(settings):
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1"]  # the stub's address


@pytest.fixture(autouse=True)
def _own_view_threads(monkeypatch):
    """The proxy route on view threads of its own, ended after the test: the database connections
    they open go with them, and the process's shared view threads (which later tests without a
    database use) never hold one."""
    threads = SyncViews(asgi.sync_application.app, 2, asgi.sync_application.limit)
    monkeypatch.setattr(asgi, "proxy_application", proxyroutes.ProxyRoutes(threads))
    yield
    threads.executor.stop()


def test_the_proxy_paths_are_the_urls_paths():
    assert proxyroutes.route(CHAT).protocol is OPENAI
    assert proxyroutes.route(RESPONSES_PATH).protocol is RESPONSES
    assert proxyroutes.route(MESSAGES).protocol is MESSAGES_PROTOCOL
    assert proxyroutes.route(CHAT).pattern == "v1/openai/chat/completions"  # the metrics' route label
    for path in (
        "/v1/openai/chat/completions/",
        "/v1/openai/responses/resp_1",
        "/v1/openai/conversations",
        "/v1/proxy/settings",
        "/v1/memories/mem_1/decorate",
    ):
        assert proxyroutes.route(path) is None, path


async def _post(app, path: str, body, headers: dict) -> httpx.Response:
    raw = body if isinstance(body, bytes) else orjson.dumps(body)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        return await client.post(path, content=raw, headers={"Content-Type": "application/json", **headers})


@pytest.mark.django_db(transaction=True)
async def test_a_proxy_call_skips_djangos_request_cycle_and_keeps_what_it_added(monkeypatch):
    async def no_django(scope, receive, send):
        raise AssertionError(f"Django served {scope['path']}")

    monkeypatch.setattr(asgi, "guarded_application", no_django)
    answer = await _post(asgi.application, CHAT, ASK, {"X-Request-Id": "req_fromclient1"})
    assert answer.status_code == 401
    assert answer.json()["error"]["type"] == "authentication_error"  # OpenAI's shape
    assert answer.headers["x-request-id"] == "req_fromclient1"
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers.get_list("x-content-type-options") == ["nosniff"]  # once, as Django's setdefault
    assert int(answer.headers["content-length"]) == len(answer.content)


@pytest.mark.django_db(transaction=True)
async def test_a_host_django_refuses_is_answered_by_django_on_the_lean_routes_too(monkeypatch):
    """Django's way checks the Host against ALLOWED_HOSTS before any view; the lean routes leave
    such a request to it (the same 400, the same log line)."""
    from memories.api import hot

    monkeypatch.setattr(hot, "answer", lambda *a: pytest.fail("the hot handler answered a bad Host"))
    monkeypatch.setattr(views, "proxy_call", lambda *a, **k: pytest.fail("the proxy answered a bad Host"))
    for path in (CHAT, MESSAGES, "/v1/memories/mem_x/decorate"):
        answer = await _post(asgi.application, path, ASK, {"Host": "evil.example"})
        assert answer.status_code == 400, path
        assert b"unauthorized" not in answer.content  # no key check ran


# --- the same answers either way ------------------------------------------------------------------

IDS = re.compile(rb"(mem|resp|req|msg|chatcmpl)_[A-Za-z0-9_\-]+")
# What differs between two calls whatever way they took.
PER_CALL_HEADERS = {"x-threadless-memory", "x-ratelimit-remaining", "x-ratelimit-reset", "x-request-id"}


def _shape(answer: httpx.Response) -> tuple:
    headers = sorted(
        (name, value if name not in PER_CALL_HEADERS else "·")
        for name, value in answer.headers.multi_items()
        if name != "content-length"
        or not answer.headers.get("content-type", "").startswith("text/event-stream")
    )
    return answer.status_code, headers, IDS.sub(rb"\1_x", answer.content)


def _cases(cast, upstream) -> list[tuple[str, str, object, dict]]:
    sent = {"Authorization": f"Bearer {cast.key_a}", "X-Upstream-Base-Url": upstream.openai_url}
    anthropic = {**sent, "X-Upstream-Base-Url": upstream.anthropic_url, "anthropic-version": "2023-06-01"}
    return [
        ("with memory", CHAT, ASK, {**sent, "X-Threadless-External-Id": "{way}"}),
        ("streamed", CHAT, {**ASK, "stream": True}, {**sent, "X-Threadless-External-Id": "{way}-s"}),
        ("no memory", CHAT, ASK, {**sent, "X-Threadless-Memory": "none"}),
        (
            "responses",
            RESPONSES_PATH,
            {"model": "m", "input": "Hi"},
            {**sent, "X-Threadless-External-Id": "{way}-r"},
        ),
        (
            "anthropic",
            MESSAGES,
            {**ASK, "max_tokens": 9},
            {**anthropic, "X-Threadless-External-Id": "{way}-a"},
        ),
        ("no key", CHAT, ASK, {"X-Upstream-Base-Url": upstream.openai_url}),
        ("a wrong key", MESSAGES, ASK, {"x-api-key": "tl_proj_nope_nope"}),
        ("not json", CHAT, b"{nope", sent),
        ("an unknown memory", CHAT, ASK, {**sent, "X-Threadless-Memory": "mem_doesnotexist"}),
        ("a bad budget", CHAT, ASK, {**sent, "X-Threadless-Memory": "none", "X-Threadless-Budget": "x"}),
        ("egress refused", CHAT, ASK, {**sent, "X-Upstream-Base-Url": "http://10.255.255.1:9/v1"}),
        ("too large", CHAT, {"model": "m", "messages": [{"role": "user", "content": "x" * 5000}]}, sent),
    ]


@pytest.mark.django_db(transaction=True)
async def test_every_answer_is_the_one_djangos_way_gives(cast, upstream, settings):
    settings.THREADLESS_MAX_BODY_BYTES = 4000
    ways = {"lean": asgi.application, "django": asgi.guarded_application}
    for name, path, body, headers in _cases(cast, upstream):
        shapes = {}
        for way, app in ways.items():
            sent = {k: v.format(way=way) for k, v in headers.items()} | {"X-Request-Id": "req_samesame01"}
            shapes[way] = _shape(await _post(app, path, body, sent))
        assert shapes["lean"] == shapes["django"], name


# --- a client gone before its call was prepared ---------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_call_cancelled_while_its_database_work_runs_gives_its_slot_back(cast, upstream):
    """The client goes away while the key check and decorate run on a thread: the thread finishes,
    and the project's slot the call took is released then, not held for ever."""
    upstream.reset()
    started, finish = asyncio.Event(), asyncio.Event()

    async def slow_offload(function, *args):
        started.set()
        await finish.wait()
        return await asyncio.to_thread(function, *args)

    request = proxyroutes.ProxyRequest(
        {
            "method": "POST",
            "path": CHAT,
            "headers": [
                (b"authorization", f"Bearer {cast.key_a}".encode()),
                (b"x-upstream-base-url", upstream.openai_url.encode()),
                (b"x-threadless-memory", b"none"),
            ],
        },
        orjson.dumps(ASK),
        None,
        "req_cancelled01",
    )
    call = asyncio.ensure_future(views.proxy_call(request, OPENAI, offload=slow_offload))
    await started.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    finish.set()
    for _ in range(200):
        if project_calls_open(cast.project_a.pk) == 0 and views_done():
            break
        await asyncio.sleep(0.01)
    assert project_calls_open(cast.project_a.pk) == 0
    assert not upstream.requests  # cancelled before the upstream call


def views_done() -> bool:
    return all(task.done() for task in asyncio.all_tasks() if task is not asyncio.current_task())


# --- the server stopping mid-stream ---------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
async def test_a_stream_cancelled_by_the_server_ends_with_its_request(cast, upstream):
    """The server cancels a request it stops serving: the relayed stream ends with it (the upstream
    connection closed, the project's slot given back), not in a task left running on its own."""
    upstream.reset()
    upstream.push(hold_after=2)  # two frames, then the upstream waits for the proxy to hang up
    raw = orjson.dumps({**ASK, "stream": True})
    scope = {
        "type": "http",
        "method": "POST",
        "path": CHAT,
        "raw_path": CHAT.encode(),
        "query_string": b"",
        "root_path": "",
        "http_version": "1.1",
        "scheme": "http",
        "server": ("127.0.0.1", 80),
        "client": ("127.0.0.1", 5),
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(raw)).encode()),
            (b"authorization", f"Bearer {cast.key_a}".encode()),
            (b"x-upstream-base-url", upstream.openai_url.encode()),
            (b"x-threadless-memory", b"none"),
        ],
    }
    messages = [{"type": "http.request", "body": raw, "more_body": False}]
    streaming = asyncio.Event()

    async def receive():
        if messages:
            return messages.pop(0)
        await asyncio.Event().wait()  # the client stays

    async def send(message):
        if message.get("body"):
            streaming.set()

    request = asyncio.ensure_future(asgi.application(scope, receive, send))
    await asyncio.wait_for(streaming.wait(), 10)
    request.cancel()
    with pytest.raises(asyncio.CancelledError):
        await request
    assert await asyncio.to_thread(upstream.closed.wait, 10)  # the upstream connection was closed
    assert project_calls_open(cast.project_a.pk) == 0
