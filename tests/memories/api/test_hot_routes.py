"""decorate and report's lean way (memories.api.hot): the ASGI entry point sends them straight to
the handler the Django URLs call too, and the answers are the same either way."""

from __future__ import annotations

import logging
import re

import httpx
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from harness.servers import ThreadlessServer
from memories.api import hot
from memories.models import Entry
from tests.fixtures.api import decorate, report
from threadless_site import asgi


def test_the_hot_paths_are_the_urls_paths():
    assert hot.route("/v1/memories/mem_1/decorate") == hot.Route("decorate", "mem_1", False)
    assert hot.route("/v1/memories/mem_1/report") == hot.Route("report", "mem_1", False)
    assert hot.route("/v1/memories/external/u/1/decorate") == hot.Route("decorate", "u/1", True)
    assert hot.route("/v1/memories/external/report") == hot.Route("report", "external", False)  # as the URLs
    for path in (
        "/v1/memories/mem_1/decorate/",
        "/v1/memories/mem_1/search",
        "/v1/memories/a/b/decorate",
        "/v1/memories//decorate",
        "/x/v1/memories/mem_1/decorate",
    ):
        assert hot.route(path) is None, path


async def test_the_asgi_app_sends_a_hot_post_to_the_handler_without_django(monkeypatch):
    assert asgi.HOT_ROUTES
    seen = []
    real = hot.answer

    def spy(*args):
        seen.append(args[0])
        return real(*args)

    def no_django(environ, start_response):  # the WSGI handler: must not be reached
        raise AssertionError(f"Django served {environ['PATH_INFO']}")

    monkeypatch.setattr(hot, "answer", spy)
    monkeypatch.setattr(asgi.sync_application, "app", no_django)
    transport = httpx.ASGITransport(app=asgi.application)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        answer = await client.post(
            "/v1/memories/mem_x/decorate", json={"messages": []}, headers={"X-Request-Id": "req_fromclient1"}
        )
        external = await client.post("/v1/memories/external/a%2Fb/report", json={"messages": []})
    assert seen == [hot.Route("decorate", "mem_x", False), hot.Route("report", "a/b", True)]
    assert answer.status_code == 401 and external.status_code == 401
    assert answer.json()["error"] == {
        "code": "unauthorized",
        "message": "No API key was sent.",
        "request_id": "req_fromclient1",
        "hint": "Send 'Authorization: Bearer <key>' with an active project key.",
        "retryable": False,
    }
    # What Django's middleware adds on its way is added here too.
    assert answer.headers["x-request-id"] == "req_fromclient1"
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["allow"] == "POST, OPTIONS"
    assert int(answer.headers["content-length"]) == len(answer.content)


async def test_other_methods_and_paths_still_go_to_django(monkeypatch):
    monkeypatch.setattr(hot, "answer", lambda *a: pytest.fail("the hot handler answered a non-hot request"))
    transport = httpx.ASGITransport(app=asgi.application)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        get = await client.get("/v1/memories/mem_x/decorate")
        slash = await client.post("/v1/memories/mem_x/decorate/", json={})
        other_format = await client.post("/v1/memories/mem_x/decorate?format=xml", json={})
    assert get.status_code == 401  # DRF: the key is checked before the method
    assert slash.status_code == 404
    assert other_format.status_code == 404  # DRF's format override: no such renderer


async def test_a_hot_post_for_a_host_outside_allowed_hosts_is_the_400_every_other_route_gives(
    monkeypatch, caplog
):
    monkeypatch.setattr(hot, "answer", lambda *a: pytest.fail("the hot handler answered a disallowed host"))
    transport = httpx.ASGITransport(app=asgi.application)
    evil = {"Host": "evil.example"}
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        elsewhere = await client.post("/v1/memories", json={}, headers=evil)
        caplog.clear()
        answers = [
            await client.post("/v1/memories/mem_x/decorate", json={"messages": []}, headers=evil),
            await client.post("/v1/memories/external/u1/report", json={"messages": []}, headers=evil),
        ]
    assert elsewhere.status_code == 400
    for answer in answers:
        assert (answer.status_code, answer.headers["content-type"], answer.content) == (
            400,
            elsewhere.headers["content-type"],
            elsewhere.content,
        )
    # Django's own check refused them: its one log line per request.
    refused = [r for r in caplog.records if r.name == "django.security.DisallowedHost"]
    assert len(refused) == 2 and all("evil.example" in r.getMessage() for r in refused)


def _memory_reads(queries) -> list[str]:
    return [
        q["sql"]
        for q in queries.captured_queries
        if re.match(r'\s*SELECT .* FROM "?memories_memory"? WHERE', q["sql"])
    ]


def _scoped_memory_update(queries) -> bool:
    return any(
        re.match(r'\s*(WITH m AS \()?UPDATE "?memories_memory"? ', q["sql"]) and "project_id" in q["sql"]
        for q in queries.captured_queries
    )


def test_decorate_and_report_read_no_memory_row_and_another_projects_memory_is_a_404(
    cast, memory_a, memory_b
):
    # The memory row's UPDATE (the lock and the numbering) is the project scoping too.
    with CaptureQueriesContext(connection) as queries:
        assert decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}]).status_code == 200
    assert _memory_reads(queries) == []
    assert _scoped_memory_update(queries)
    with CaptureQueriesContext(connection) as queries:
        assert report(cast.a, memory_a.id, [{"role": "assistant", "content": "hello"}]).status_code == 202
    assert _memory_reads(queries) == []
    assert _scoped_memory_update(queries)
    for call in (
        lambda: decorate(cast.a, memory_b.id, [{"role": "user", "content": "not yours"}]),
        lambda: report(cast.a, memory_b.id, [{"role": "assistant", "content": "not yours"}]),
        lambda: report(cast.a, memory_b.id, [], failures=[{"task_id": "t", "error": "x"}]),
    ):
        answer = call()
        assert answer.status_code == 404 and answer.json()["error"]["code"] == "not_found"
    assert not Entry.objects.filter(memory=memory_b).exists()
    memory_b.refresh_from_db()
    assert memory_b.last_seq == 0
    # A body that fails validation on a memory that is not there is still the 404 (as before).
    missing = decorate(cast.a, "mem_nope", [{"role": "nobody", "content": "x"}])
    assert missing.status_code == 404


def test_the_usage_count_goes_with_the_limits_round_trip_and_is_taken_back_when_the_call_fails(
    cast, memory_a
):
    from common import counters
    from projects import usage

    key = usage.operation_item(cast.project_a.pk, "decorate")[0]
    before = counters.store().get(key)
    assert decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}]).status_code == 200
    assert counters.store().get(key) == before + 1
    assert decorate(cast.a, memory_a.id, [{"role": "bad", "content": "hi"}]).status_code == 400
    assert decorate(cast.a, "mem_nope", [{"role": "user", "content": "hi"}]).status_code == 404
    assert decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}], store=False).status_code == 200
    assert counters.store().get(key) == before + 1  # failed calls and a dry run are not in the volume


def test_a_refused_request_is_not_in_the_usage_volume(cast, memory_a):
    from common import counters
    from projects import usage
    from projects.auth import keys_changed
    from projects.models import Project

    Project.objects.filter(pk=cast.project_a.pk).update(rate_limit_per_minute=1)
    keys_changed()
    key = usage.operation_item(cast.project_a.pk, "report")[0]
    before = counters.store().get(key)
    first = report(cast.a, memory_a.id, [{"role": "user", "content": "one"}])
    second = report(cast.a, memory_a.id, [{"role": "user", "content": "two"}])
    assert (first.status_code, second.status_code) == (202, 429)
    assert second.json()["error"]["code"] == "rate_limited"
    assert second["X-RateLimit-Remaining"] == "0" and "Retry-After" in second
    assert counters.store().get(key) == before + 1


def _normal(response: httpx.Response, ids: dict) -> tuple:
    text = response.text
    for name, value in ids.items():
        text = text.replace(value, name)
    text = re.sub(r"req_[0-9a-f]{24}", "req_X", text)
    text = re.sub(r"mem_[A-Za-z0-9]{20}", "mem_X", text)
    skip = {"date", "server", "x-request-id", "x-ratelimit-reset", "retry-after", "x-ratelimit-remaining"}
    headers = sorted((k, v) for k, v in response.headers.items() if k not in skip)
    return response.status_code, headers, text


def _conversation(server: ThreadlessServer) -> list:
    out = []
    with server.client() as client, httpx.Client(base_url=server.url + "/v1", timeout=30) as anon:
        mine = client.post("/memories", json={}).json()["id"]
        ids = {"MINE": mine}
        msg = [{"role": "user", "content": "I have a beagle."}]
        calls = [
            client.post(f"/memories/{mine}/decorate", json={"messages": msg}),
            client.post(
                f"/memories/{mine}/report", json={"messages": [{"role": "assistant", "content": "nice"}]}
            ),
            client.post(f"/memories/{mine}/decorate", json={"messages": msg, "store": False}),
            client.post(
                f"/memories/{mine}/decorate", json={"messages": msg}, headers={"Idempotency-Key": "k1"}
            ),
            client.post(
                f"/memories/{mine}/decorate", json={"messages": msg}, headers={"Idempotency-Key": "k1"}
            ),
            client.post(
                f"/memories/{mine}/decorate", content=b"{nope", headers={"Content-Type": "application/json"}
            ),
            client.post(
                f"/memories/{mine}/decorate",
                content=b'{"messages": []}',
                headers={"Content-Type": "text/plain"},
            ),
            client.post(
                f"/memories/{mine}/decorate", json={"messages": msg}, headers={"Accept": "text/html"}
            ),
            client.post(f"/memories/{mine}/decorate", json={"messages": msg, "zzz": 1}),
            client.post(f"/memories/{mine}/report", json={"messages": []}),
            client.post("/memories/mem_nope/decorate", json={"messages": msg}),
            client.post("/memories/mem_nope/report", json={"messages": msg}),
            client.post("/memories/external/user%2F7/decorate", json={"messages": msg}),
            client.post(
                "/memories/external/user%2F7/report",
                json={"messages": [{"role": "assistant", "content": "k"}]},
            ),
            client.post(
                f"/memories/{mine}/decorate",
                content=b"{" + b" " * (3 * 1024 * 1024) + b"}",
                headers={"Content-Type": "application/json"},
            ),
            anon.post(f"/memories/{mine}/decorate", json={"messages": msg}),
            anon.post(
                f"/memories/{mine}/decorate", json={"messages": msg}, headers={"Authorization": "Bearer tl_x"}
            ),
        ]
        out = [_normal(response, ids) for response in calls]
    return out


@pytest.mark.services
def test_a_real_uvicorn_answers_the_hot_routes_as_djangos_way_does():
    """Two real servers, the hot routes on and off (THREADLESS_HOT_ROUTES=0: through Django's
    request cycle and DRF's URL, the same handler): the same conversation, the same answers."""
    answers = {}
    for hot_on in ("1", "0"):
        with ThreadlessServer(env={"THREADLESS_HOT_ROUTES": hot_on}) as server:
            answers[hot_on] = _conversation(server)
    assert [a[0] for a in answers["1"]] == [
        200,
        202,
        200,
        200,
        200,
        400,
        400,
        406,
        400,
        400,
        404,
        404,
        200,
        202,
        413,
        401,
        401,
    ]
    for on, off in zip(answers["1"], answers["0"], strict=True):
        assert on == off


def _boom(*args, **kwargs):
    raise RuntimeError("the key store is down")


async def test_a_5xx_on_the_hot_way_is_logged_on_django_request_as_djangos_handler_logs_it(
    monkeypatch, caplog
):
    """The hot way skips Django's request cycle, and with it the `django.request` line Django's
    handler writes for an error answer: it writes the same line itself (level, message, extras)."""
    from projects import auth

    monkeypatch.setattr(auth, "key_for_header", _boom)
    secret = "tl_live_supersecretvalue1234567890"
    transport = httpx.ASGITransport(app=asgi.application)
    with caplog.at_level(logging.WARNING, logger="django.request"):
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            answer = await client.post(
                "/v1/memories/mem_x/report",
                json={"messages": []},
                headers={"Authorization": f"Bearer {secret}"},
            )
    assert answer.status_code == 500
    records = [r for r in caplog.records if r.name == "django.request"]
    assert len(records) == 1, records
    record = records[0]
    assert (record.levelname, record.getMessage()) == (
        "ERROR",
        "Internal Server Error: /v1/memories/mem_x/report",
    )
    assert record.status_code == 500
    assert record.request.path == "/v1/memories/mem_x/report" and record.request.method == "POST"
    assert record.exc_info is None  # as Django's handler: the traceback is threadless.errors' line
    assert secret not in record.getMessage()
    assert all(secret not in r.getMessage() for r in caplog.records)


def test_djangos_way_logs_the_same_line_for_the_same_5xx(monkeypatch, caplog, cast):
    """The Django URL of the route (test client, WSGI, hot routes off): Django's handler writes it."""
    from projects import auth

    monkeypatch.setattr(auth, "key_for_header", _boom)
    with caplog.at_level(logging.WARNING, logger="django.request"):
        answer = report(cast.a, "mem_x", [])
    assert answer.status_code == 500
    records = [r for r in caplog.records if r.name == "django.request"]
    assert len(records) == 1, records  # once: the handler's line, none from the hot handler itself
    assert (records[0].levelname, records[0].getMessage(), records[0].status_code) == (
        "ERROR",
        "Internal Server Error: /v1/memories/mem_x/report",
        500,
    )


async def test_a_4xx_on_the_hot_way_is_a_django_request_warning_only_when_warnings_are_on(caplog):
    transport = httpx.ASGITransport(app=asgi.application)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        with caplog.at_level(logging.ERROR, logger="django.request"):
            await client.post("/v1/memories/mem_x/report", json={"messages": []})
        assert not [r for r in caplog.records if r.name == "django.request"]
        with caplog.at_level(logging.WARNING, logger="django.request"):
            await client.post("/v1/memories/mem_x/report", json={"messages": []})
    records = [r for r in caplog.records if r.name == "django.request"]
    assert [(r.levelname, r.getMessage(), r.status_code) for r in records] == [
        ("WARNING", "Unauthorized: /v1/memories/mem_x/report", 401)
    ]
