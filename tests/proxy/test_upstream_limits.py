"""What an upstream or one tenant can cost the proxy: each test performs the attack.

A hostile upstream (a real local socket) sends a gzip bomb, a 30 MiB JSON answer or an endless
event-stream line; a tenant holds many slow streams. The proxy answers in the provider's error
shape, stores nothing bigger than a report body, stays small in memory, keeps `/healthz`
answering, and lets the other tenants' calls through.
"""

from __future__ import annotations

import threading
import time
import uuid

import httpx
import openai
import orjson
import pytest
from django.test import AsyncClient

from harness.hostile import HostileUpstream, big_json, gzip_bomb, peak_reset, peak_rss
from memories.models import Entry, Memory
from proxy.upstream import project_calls_open
from tests.proxy.conftest import entries

CHAT = "/v1/openai/chat/completions"
MiB = 1024 * 1024


@pytest.fixture(scope="module")
def hostile():
    upstream = HostileUpstream()
    yield upstream
    upstream.close()


class HealthProbe:
    """Polls /healthz every 50 ms from another thread while an attack runs."""

    def __init__(self, url: str):
        self.url = url
        self.answers: list[tuple[int, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        with httpx.Client(timeout=30) as http:
            while not self._stop.is_set():
                started = time.monotonic()
                status = http.get(self.url + "/healthz").status_code
                self.answers.append((status, time.monotonic() - started))
                self._stop.wait(0.05)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(35)


def _openai(live, hostile, external: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=live.url + "/v1/openai",
        api_key=live.key,
        max_retries=0,
        timeout=60,
        default_headers={
            "X-Upstream-Base-Url": hostile.url + "/v1",
            "X-Upstream-Authorization": "sk-hostile",
            "X-Threadless-External-Id": external,
        },
    )


def _user() -> str:
    return "user-" + uuid.uuid4().hex[:8]


# --- on a live server ----------------------------------------------------------------------------


def test_a_gzip_bomb_is_a_502_in_openais_shape_and_the_server_stays_small(live, hostile):
    hostile.serve("gzip", gzip_bomb(256))  # ~255 KB on the wire, 256 MiB decoded
    client = _openai(live, hostile, _user())
    rss_before = peak_reset(live.web.pid)
    caught = []

    def attack():
        try:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        except openai.APIStatusError as exc:
            caught.append(exc)

    with HealthProbe(live.url) as probe:
        attackers = [threading.Thread(target=attack) for _ in range(4)]
        for thread in attackers:
            thread.start()
        for thread in attackers:
            thread.join(60)
    assert [exc.status_code for exc in caught] == [502] * 4
    assert caught[0].body["code"] == "upstream_unreachable"
    assert "larger than 8 MiB" in caught[0].body["message"]
    growth = peak_rss(live.web.pid) - rss_before
    assert growth < 120 * MiB, f"the web process grew by {growth / MiB:.0f} MiB"  # 4 × 256 MiB on offer
    assert probe.answers and all(status == 200 for status, _ in probe.answers)


def test_a_30_mib_json_answer_is_a_502_and_nothing_of_it_is_stored(live, hostile):
    hostile.serve("json", big_json(30))
    user = _user()
    with pytest.raises(openai.APIStatusError) as caught:
        _openai(live, hostile, user).chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
    assert caught.value.status_code == 502 and "larger than 8 MiB" in caught.value.body["message"]
    memory_id = caught.value.response.headers["x-threadless-memory"]
    stored = entries(live, memory_id)
    assert max(len(e["content"] or "") for e in stored) < 10_000
    assert not [e for e in stored if e["role"] == "assistant"]


def test_a_64_mib_stream_without_a_blank_line_is_cut_early_while_healthz_answers(live, hostile):
    hostile.serve("endless_line", 64)
    user = _user()
    rss_before = peak_reset(live.web.pid)
    with HealthProbe(live.url) as probe:
        with httpx.Client(timeout=60) as http:
            with http.stream(
                "POST",
                live.url + CHAT,
                json={"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]},
                headers={
                    "Authorization": f"Bearer {live.key}",
                    "X-Upstream-Base-Url": hostile.url + "/v1",
                    "X-Upstream-Authorization": "sk-hostile",
                    "X-Threadless-External-Id": user,
                },
            ) as response:
                assert response.status_code == 200
                memory_id = response.headers["x-threadless-memory"]
                received = b"".join(response.iter_bytes())
    assert received.startswith(b"data: ") and b"stream frame is larger than 4 MiB" in received
    assert len(received) < 4096  # nothing of the endless line was relayed
    assert hostile.peer_closed.wait(15), "the proxy kept reading the endless line"
    assert hostile.sent < 40 * MiB  # stopped at the 4 MiB frame cap (plus what socket buffers took)
    growth = peak_rss(live.web.pid) - rss_before
    assert growth < 48 * MiB, f"the web process grew by {growth / MiB:.0f} MiB"  # 64 MiB on offer
    assert probe.answers and all(status == 200 and seconds < 5 for status, seconds in probe.answers)
    failures = [e for e in entries(live, memory_id) if e["kind"] in ("error", "digest")]
    assert failures  # recorded under the memory's policy, like any broken upstream stream


# --- in process ----------------------------------------------------------------------------------

db = pytest.mark.django_db(transaction=True)


def _headers(key: str, upstream, **extra) -> dict:
    return {
        "Authorization": f"Bearer {key}",
        "X-Upstream-Base-Url": upstream.openai_url,
        "X-Upstream-Authorization": "sk-stub",
        **extra,
    }


async def _chat(key: str, upstream, *, stream: bool = False, **extra):
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": stream}
    return await AsyncClient().post(
        CHAT, orjson.dumps(body), content_type="application/json", headers=_headers(key, upstream, **extra)
    )


async def _held_stream(key: str, upstream):
    """A streamed call whose upstream sends its first frame and then nothing: the client reads
    that frame and keeps the stream open."""
    upstream.push(text="a slow reply that never ends", hold_after=1)
    response = await _chat(key, upstream, stream=True)
    assert response.status_code == 200
    response.content_iterator = response.streaming_content  # a new iterator on every access
    await anext(response.content_iterator)
    return response


async def _hang_up(response) -> None:
    """What Django's ASGI handler does when the client goes: stop the stream, close the response."""
    await response.content_iterator.aclose()
    response.close()


@db
async def test_a_reply_longer_than_a_report_body_is_stored_cut_with_a_marker(cast, hostile, settings):
    hostile.serve("json", big_json(5))  # within the 8 MiB read cap, past the 1 MiB body limit
    headers = {
        "Authorization": f"Bearer {cast.key_a}",
        "X-Upstream-Base-Url": hostile.url + "/v1",
        "X-Upstream-Authorization": "sk-hostile",
        "X-Threadless-External-Id": "long-reply",
    }
    response = await AsyncClient().post(
        CHAT,
        orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
        content_type="application/json",
        headers=headers,
    )
    assert response.status_code == 200
    assert (
        len(orjson.loads(response.content)["choices"][0]["message"]["content"]) == 5 * MiB
    )  # the client gets it all
    memory = await Memory.objects.aget(external_id="long-reply")
    reply = await Entry.objects.filter(memory=memory, role="assistant").aget()
    limit = settings.THREADLESS_MAX_BODY_BYTES
    assert reply.content.endswith(f"\n\n[cut off: the reply was longer than {limit:,} characters]")
    assert len(reply.content) < limit + 100


@db
async def test_one_projects_slow_streams_cannot_starve_another_project(cast, upstream, settings):
    settings.THREADLESS_PROXY_PROJECT_CONCURRENCY = 3
    held = [await _held_stream(cast.key_a, upstream) for _ in range(3)]
    assert project_calls_open(cast.project_a.pk) == 3
    try:
        over = await _chat(cast.key_a, upstream, stream=True, **{"X-Threadless-External-Id": "a-over"})
        assert over.status_code == 503 and over["Retry-After"] == "1"
        assert orjson.loads(over.content)["error"]["code"] == "upstream_busy"  # OpenAI's error shape
        assert not await Memory.objects.filter(
            external_id="a-over"
        ).aexists()  # refused before anything is stored
        other = await _chat(cast.key_b, upstream)
        assert other.status_code == 200
        assert orjson.loads(other.content)["choices"][0]["message"]["content"] == "Hello from the stub."
    finally:
        for response in held:
            await _hang_up(response)
    assert project_calls_open(cast.project_a.pk) == 0
    assert (await _chat(cast.key_a, upstream)).status_code == 200  # its slots came back


@db
async def test_a_full_upstream_pool_answers_503_with_retry_after_at_once(cast, upstream, settings):
    settings.THREADLESS_PROXY_MAX_CONNECTIONS = 2
    settings.THREADLESS_PROXY_POOL_TIMEOUT = 0.2
    held = [await _held_stream(cast.key_a, upstream) for _ in range(2)]
    try:
        started = time.monotonic()
        waiting = await _chat(cast.key_b, upstream, **{"X-Threadless-External-Id": "b-wait"})
        assert waiting.status_code == 503 and waiting["Retry-After"] == "1"
        error = orjson.loads(waiting.content)["error"]
        assert error["code"] == "upstream_busy" and "in use" in error["message"]
        assert time.monotonic() - started < 30  # not the 600 s it used to wait (loose: a busy machine)
    finally:
        for response in held:
            await _hang_up(response)
    assert project_calls_open(cast.project_a.pk) == 0


@db
async def test_an_anthropic_client_over_its_projects_cap_gets_anthropics_overloaded_shape(
    cast, upstream, settings
):
    settings.THREADLESS_PROXY_PROJECT_CONCURRENCY = 1
    held = await _held_stream(cast.key_a, upstream)
    body = {"model": "m", "max_tokens": 10, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    headers = {
        "x-api-key": cast.key_a,
        "X-Upstream-Base-Url": upstream.anthropic_url,
        "X-Upstream-Authorization": "sk-ant",
    }
    try:
        over = await AsyncClient().post(
            "/v1/anthropic/v1/messages", orjson.dumps(body), content_type="application/json", headers=headers
        )
        assert over.status_code == 503 and over["Retry-After"] == "1"
        assert orjson.loads(over.content) == {
            "type": "error",
            "error": {"type": "overloaded_error", "message": orjson.loads(over.content)["error"]["message"]},
        }
    finally:
        await _hang_up(held)
