"""The per-process key cache (projects.auth): one key lookup per process, revocation at once everywhere."""

from __future__ import annotations

import json
import subprocess
import time

import httpx
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from harness.servers import BIN, ROOT, ThreadlessServer, free_port
from projects import auth
from projects.models import ApiKey
from projects.services import key_create, key_revoke


def _key_reads(ctx) -> int:
    return sum('FROM "memories_apikey"' in q["sql"] for q in ctx.captured_queries)


def test_a_second_request_with_the_same_key_reads_no_key_row(cast):
    assert cast.a.get("/v1/memories").status_code == 200
    with CaptureQueriesContext(connection) as ctx:
        assert cast.a.get("/v1/memories").status_code == 200
    assert _key_reads(ctx) == 0


def test_the_cache_off_reads_the_key_row_on_every_request(cast, settings):
    settings.THREADLESS_KEY_CACHE_SECONDS = 0
    assert cast.a.get("/v1/memories").status_code == 200
    with CaptureQueriesContext(connection) as ctx:
        assert cast.a.get("/v1/memories").status_code == 200
    assert _key_reads(ctx) == 1


def test_a_revoked_key_is_refused_on_the_very_next_request(cast):
    assert cast.a.get("/v1/memories").status_code == 200
    key_revoke(prefix=ApiKey.objects.get(project=cast.project_a).prefix)
    response = cast.a.get("/v1/memories")
    assert response.status_code == 401
    assert response.json()["error"]["message"] == "The API key has been revoked."


def test_a_wrong_secret_with_a_cached_lookup_is_still_refused(cast):
    assert cast.a.get("/v1/memories").status_code == 200
    forged = cast.key_a[:-4] + ("AAAA" if not cast.key_a.endswith("AAAA") else "BBBB")
    assert cast.api(forged).get("/v1/memories").status_code == 401


def test_a_project_change_reaches_the_next_request(cast):
    assert cast.a.get("/v1/memories").status_code == 200
    cast.project_a.rate_limit_per_minute = 7
    cast.project_a.save()
    assert cast.a.get("/v1/memories")["X-RateLimit-Limit"] == "7"


def test_deleting_an_agent_revokes_its_cached_publishable_key_at_once(cast):
    from chat.services import agent_delete

    publishable = cast.publishable_a
    key = auth.key_from_plaintext(publishable)  # cached now
    assert key.revoked_at is None
    agent_delete(agent=cast.agent_a)
    with pytest.raises(auth.Unauthorized):
        auth.key_from_plaintext(publishable)


def test_a_row_read_while_a_change_lands_is_not_kept_past_it(cast, monkeypatch):
    """The row is tagged with the generation read before it: a revocation that lands between the
    generation read and the row read must not be hidden by the cached (old) row."""
    _key, plaintext = key_create(project=cast.project_a)
    lookup = plaintext[len("tl_proj_") :][:10]
    real = auth._key_row

    def racing(wanted):
        row = real(wanted)  # the old row, read before the revocation commits
        key_revoke(prefix=row.prefix)  # … which bumps the generation now
        return row

    monkeypatch.setattr(auth, "_key_row", racing)
    auth._cache.rows.pop(lookup, None)
    assert auth.key_from_plaintext(plaintext).revoked_at is None  # this request read the old row
    monkeypatch.setattr(auth, "_key_row", real)
    with pytest.raises(auth.Unauthorized):
        auth.key_from_plaintext(plaintext)


def _second_web(server: ThreadlessServer) -> tuple[subprocess.Popen, str]:
    """Another web process on the same database and counter store (a second machine or worker)."""
    port = free_port()
    log = open(server.var / "web2.log", "ab")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen(
        [
            str(BIN / "uvicorn"),
            "threadless_site.asgi:application",
            "--port",
            str(port),
            "--host",
            "127.0.0.1",
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=server.env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        assert proc.poll() is None, (server.var / "web2.log").read_text()
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("the second web process did not start")


def test_revoking_a_key_holds_at_once_on_every_process():
    with ThreadlessServer() as server:
        created = json.loads(server.manage("create_key", "--project", server.demo["project_id"], "--json"))
        plaintext = created["key"]
        other, other_url = _second_web(server)
        try:
            headers = {"Authorization": f"Bearer {plaintext}"}
            for url in (server.url, other_url):  # both processes have the key cached
                for _ in range(2):
                    assert httpx.get(url + "/v1/memories", headers=headers, timeout=30).status_code == 200
            server.manage("revoke_key", created["prefix"])  # a third process: the command line
            for url in (server.url, other_url):
                response = httpx.get(url + "/v1/memories", headers=headers, timeout=30)
                assert response.status_code == 401, url
                assert response.json()["error"]["code"] == "unauthorized"
        finally:
            other.terminate()
            other.wait(timeout=30)


class _Trips:
    """Counts the counter store's round trips (every public call is one)."""

    def __init__(self, monkeypatch):
        from common import counters

        self.calls: list[str] = []
        store = counters.store()
        for name in ("get", "incr_many", "read_and_incr", "decr_many", "add"):
            real = getattr(store, name)
            monkeypatch.setattr(store, name, self._wrap(name, real))

    def _wrap(self, name, real):
        def call(*args, **kwargs):
            self.calls.append(name)
            return real(*args, **kwargs)

        return call


def _limited(cast):
    cast.project_a.rate_limit_per_minute = 1000
    cast.project_a.allowance_requests_per_month = 1000
    cast.project_a.save()


def test_a_cached_key_is_confirmed_in_the_round_trip_of_the_request_counts(cast, monkeypatch):
    _limited(cast)
    assert cast.a.get("/v1/memories").status_code == 200  # cached now
    trips = _Trips(monkeypatch)
    answer = cast.a.get("/v1/memories")
    assert answer.status_code == 200
    assert trips.calls == ["read_and_incr"]  # generation, rate bucket and plan count together
    assert answer["X-RateLimit-Remaining"] == str(1000 - 2)


def test_a_revoked_cached_key_is_refused_and_its_request_counts_for_nothing(cast):
    from projects import usage

    _limited(cast)
    assert cast.a.get("/v1/memories").status_code == 200
    plan_before = usage.plan_used(cast.project_a.pk)
    key_revoke(prefix=ApiKey.objects.get(project=cast.project_a).prefix)
    response = cast.a.get("/v1/memories")
    assert response.status_code == 401
    assert response.json()["error"]["message"] == "The API key has been revoked."
    assert usage.plan_used(cast.project_a.pk) == plan_before


def test_a_changed_project_is_counted_once_under_its_new_limits(cast):
    _limited(cast)
    assert cast.a.get("/v1/memories")["X-RateLimit-Remaining"] == str(1000 - 1)
    cast.project_a.rate_limit_per_minute = 50
    cast.project_a.save()
    answer = cast.a.get("/v1/memories")
    assert answer["X-RateLimit-Limit"] == "50"
    assert answer["X-RateLimit-Remaining"] == str(50 - 2)  # the second request of this minute, counted once


def test_a_view_without_the_key_throttle_checks_the_generation_itself(cast, monkeypatch):
    from rest_framework.test import APIRequestFactory
    from rest_framework.views import APIView

    class Open(APIView):
        throttle_classes = []

        def get(self, request):
            from rest_framework.response import Response

            return Response({"key": request.auth.prefix})

    assert cast.a.get("/v1/memories").status_code == 200  # cached now
    trips = _Trips(monkeypatch)
    request = APIRequestFactory().get("/x", HTTP_AUTHORIZATION=f"Bearer {cast.key_a}")
    assert Open.as_view()(request).status_code == 200
    assert trips.calls == ["get"]
