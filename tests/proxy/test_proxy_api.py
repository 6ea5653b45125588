"""The proxy routes in-process (Django's AsyncClient) against the real stub socket: access, header
handling, degraded mode, unreachable and refused upstreams, and the settings API."""

from __future__ import annotations

import io
import json

import orjson
import pytest
from asgiref.sync import sync_to_async
from django.core.management import call_command
from django.db import OperationalError
from django.test import AsyncClient, Client

from harness.servers import free_port
from memories.models import Entry, Memory
from memories.services import memory_create
from projects.services import key_create, secret_value
from proxy import services as proxy_services

pytestmark = pytest.mark.django_db(transaction=True)

CHAT = "/v1/openai/chat/completions"
MESSAGES = "/v1/anthropic/v1/messages"


def _headers(cast, upstream, **extra) -> dict:
    return {
        "Authorization": f"Bearer {cast.key_a}",
        "X-Upstream-Base-Url": upstream.openai_url,
        "X-Upstream-Authorization": "sk-stub",
        **extra,
    }


async def _post(path: str, body, headers: dict):
    raw = body if isinstance(body, bytes) else orjson.dumps(body)
    return await AsyncClient().post(path, raw, content_type="application/json", headers=headers)


async def test_when_decorate_fails_the_call_is_forwarded_as_sent_and_marked_degraded(
    cast, upstream, monkeypatch
):
    def database_down(**kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(proxy_services, "memory_decorate", database_down)
    body = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"},
        ],
    }
    response = await _post(CHAT, body, _headers(cast, upstream, **{"X-Threadless-External-Id": "u-1"}))
    assert response.status_code == 200
    assert response["X-Threadless-Degraded"] == "1"
    assert orjson.loads(response.content)["choices"][0]["message"]["content"] == "Hello from the stub."
    assert upstream.requests[-1].body["messages"] == body["messages"]  # untouched
    memory = await Memory.objects.aget(external_id="u-1")
    assert await Entry.objects.filter(memory=memory).acount() == 0  # nothing reported for an unstored turn


async def test_a_call_without_a_threadless_key_is_401_in_openais_error_shape_and_goes_nowhere(cast, upstream):
    response = await _post(CHAT, {"model": "m", "messages": []}, {"X-Upstream-Base-Url": upstream.openai_url})
    assert response.status_code == 401
    error = orjson.loads(response.content)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["code"] == "unauthorized" and error["type"] == "authentication_error"
    assert response["X-Request-Id"].startswith("req_")
    assert not upstream.requests


async def test_a_publishable_key_cannot_use_the_proxy(cast, upstream):
    from chat.services import agent_create

    agent = await agent_create_async(agent_create, cast)
    _key, publishable = await key_create_async(cast.project_a, agent.id)
    response = await _post(MESSAGES, {"model": "m", "messages": []}, {"x-api-key": publishable})
    assert response.status_code == 401
    assert not upstream.requests


async def agent_create_async(agent_create, cast):
    from asgiref.sync import sync_to_async

    return await sync_to_async(agent_create)(
        project=cast.project_a,
        name="A",
        config={"workflow": [{"id": "llm", "type": "llm", "provider": "demo", "model": "demo"}]},
    )


async def key_create_async(project, agent_id):
    from asgiref.sync import sync_to_async

    return await sync_to_async(key_create)(project=project, kind="publishable", agent_id=agent_id)


async def test_another_projects_memory_is_not_found(cast, upstream):
    from asgiref.sync import sync_to_async

    other, _ = await sync_to_async(memory_create)(project=cast.project_b)
    response = await _post(
        CHAT,
        {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        _headers(cast, upstream, **{"X-Threadless-Memory": other.id}),
    )
    assert response.status_code == 404
    assert orjson.loads(response.content)["error"]["code"] == "not_found"
    assert not upstream.requests


async def test_a_body_that_is_not_json_is_400_and_get_is_405(cast, upstream):
    bad = await _post(CHAT, b"{nope", _headers(cast, upstream))
    assert bad.status_code == 400 and orjson.loads(bad.content)["error"]["code"] == "invalid_request"
    wrong = await AsyncClient().get(CHAT, headers=_headers(cast, upstream))
    assert wrong.status_code == 405 and orjson.loads(wrong.content)["error"]["code"] == "method_not_allowed"


async def test_a_bad_budget_header_is_400_and_a_good_one_is_the_decorate_budget(cast, upstream):
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    bad = await _post(
        CHAT,
        body,
        _headers(cast, upstream, **{"X-Threadless-Budget": "lots", "X-Threadless-External-Id": "u-b"}),
    )
    assert bad.status_code == 400 and "X-Threadless-Budget" in orjson.loads(bad.content)["error"]["message"]
    good = await _post(
        CHAT,
        body,
        _headers(cast, upstream, **{"X-Threadless-Budget": "1234", "X-Threadless-External-Id": "u-b"}),
    )
    assert good.status_code == 200
    memory = await Memory.objects.aget(external_id="u-b")
    assert memory.last_budget_tokens == 1234


async def test_an_unreachable_upstream_answers_502_in_openais_shape_and_is_recorded(cast, upstream):
    dead = f"http://127.0.0.1:{free_port()}/v1"
    response = await _post(
        CHAT,
        {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        _headers(cast, upstream, **{"X-Upstream-Base-Url": dead, "X-Threadless-External-Id": "u-d"}),
    )
    assert response.status_code == 502
    error = orjson.loads(response.content)["error"]
    assert set(error) == {"message", "type", "param", "code"} and "connection refused" in error["message"]
    memory = await Memory.objects.aget(external_id="u-d")
    kinds = [
        e async for e in Entry.objects.filter(memory=memory).order_by("seq").values_list("kind", "content")
    ]
    assert kinds[0] == ("message", "hi")
    assert kinds[1] == ("error", "Chat model execution failed: connection refused")


async def test_a_refused_upstream_answers_502_naming_the_allow_list_value_and_stores_no_turn(
    cast, upstream, settings
):
    settings.THREADLESS_EGRESS_ALLOW = []
    memory, _ = await sync_to_async(memory_create)(project=cast.project_a, external_id="u-refused")
    response = await _post(
        MESSAGES,
        {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]},
        {
            "x-api-key": cast.key_a,
            "X-Upstream-Base-Url": upstream.anthropic_url,
            "X-Threadless-Memory": memory.id,
        },
    )
    assert response.status_code == 502
    body = orjson.loads(response.content)
    assert body["type"] == "error" and body["error"]["message"] == (
        "Threadless could not reach the upstream: egress to 127.0.0.1 is not allowed; to allow it, an "
        "operator adds 127.0.0.1 to THREADLESS_EGRESS_ALLOW (or on the console's Egress page)"
    )
    assert not upstream.requests
    assert await Entry.objects.filter(memory=memory).acount() == 0
    assert (await Memory.objects.aget(pk=memory.pk)).last_turn == 0
    by_user = await _post(
        CHAT,
        {"model": "m", "user": "u-new", "messages": [{"role": "user", "content": "x"}]},
        _headers(cast, upstream),
    )
    assert by_user.status_code == 502 and not await Memory.objects.filter(external_id="u-new").aexists()


async def test_a_stream_is_relayed_in_whole_frames_with_the_memory_headers(cast, upstream):
    response = await _post(
        CHAT,
        {"model": "m", "stream": True, "messages": [{"role": "user", "content": "s"}]},
        _headers(cast, upstream, **{"X-Threadless-External-Id": "u-s"}),
    )
    assert response["Content-Type"] == "text/event-stream"
    assert response["X-Threadless-Memory"].startswith("mem_") and response["X-Threadless-Turn"] == "1"
    chunks = [chunk async for chunk in response.streaming_content]
    assert all(chunk.endswith(b"\n\n") for chunk in chunks)  # whole frames, those of one read together
    frames = b"".join(chunks).split(b"\n\n")[:-1]
    assert len(frames) == 7 and frames[-1] == b"data: [DONE]"  # role, four words, finish, [DONE]


async def test_an_error_event_mid_stream_stores_the_partial_marked_and_the_failure(cast, upstream):
    upstream.push(text="alpha beta gamma", error_after=2)
    response = await _post(
        CHAT,
        {"model": "m", "stream": True, "messages": [{"role": "user", "content": "go"}]},
        _headers(cast, upstream, **{"X-Threadless-External-Id": "u-e"}),
    )
    frames = [chunk async for chunk in response.streaming_content]
    assert b"server had an error" in frames[-1]
    memory = await Memory.objects.aget(external_id="u-e")
    rows = [
        r async for r in Entry.objects.filter(memory=memory).order_by("seq").values_list("kind", "content")
    ]
    assert rows[1] == ("message", "alpha \n\n[cut off: the upstream stream ended early]")
    assert rows[2][0] == "error" and "Streaming chat failed: The server had an error" in rows[2][1]


# --- settings: API, command, console ---------------------------------------------------------


def test_the_settings_api_stores_the_key_in_the_secret_store_and_never_answers_it(cast):
    answer = cast.a.get("/v1/proxy/settings")
    assert answer.status_code == 200
    assert answer.json()["openai"] == {
        "base_url": None,
        "effective_base_url": "https://api.openai.com/v1",
        "api_key_set": False,
        "api_key_env": None,
    }
    put = cast.a.put(
        "/v1/proxy/settings/anthropic",
        {"base_url": "https://llm.example.com/", "api_key": "sk-ant-xyz"},
        format="json",
    )
    assert put.status_code == 200 and "sk-ant-xyz" not in put.content.decode()
    assert put.json()["base_url"] == "https://llm.example.com" and put.json()["api_key_set"] is True
    assert secret_value(project_id=cast.project_a.pk, name="proxy.anthropic") == "sk-ant-xyz"
    assert cast.b.get("/v1/proxy/settings").json()["anthropic"]["api_key_set"] is False  # per project
    cleared = cast.a.put("/v1/proxy/settings/anthropic", {"api_key": None}, format="json")
    assert cleared.json()["api_key_set"] is False


def test_saving_an_upstream_the_egress_policy_refuses_is_400_naming_the_value_to_allow(cast, settings):
    settings.THREADLESS_EGRESS_ALLOW = []
    for url, host in (("http://127.0.0.1:11434/v1", "127.0.0.1"), ("http://localhost:8080/v1", "localhost")):
        refused = cast.a.put("/v1/proxy/settings/openai", {"base_url": url}, format="json")
        assert refused.status_code == 400
        assert refused.json()["error"]["message"] == (
            f"base_url: egress to {host} is not allowed; to allow it, an operator adds {host} to "
            "THREADLESS_EGRESS_ALLOW (or on the console's Egress page)"
        )
    assert cast.a.get("/v1/proxy/settings").json()["openai"]["base_url"] is None
    settings.THREADLESS_EGRESS_ALLOW = ["localhost"]
    allowed = cast.a.put("/v1/proxy/settings/openai", {"base_url": "http://localhost:8080/v1"}, format="json")
    assert allowed.status_code == 200


def test_the_settings_api_refuses_bad_input_in_the_error_shape(cast):
    assert cast.a.put("/v1/proxy/settings/mistral", {}, format="json").status_code == 404
    unknown = cast.a.put("/v1/proxy/settings/openai", {"model": "x"}, format="json")
    assert unknown.status_code == 400 and unknown.json()["error"]["message"].startswith("model")
    bad_url = cast.a.put("/v1/proxy/settings/openai", {"base_url": "file:///etc/passwd"}, format="json")
    assert bad_url.status_code == 400 and bad_url.json()["error"]["message"].startswith("base_url")
    assert cast.api().get("/v1/proxy/settings").status_code == 401


def test_an_environment_key_goes_only_where_its_allow_entry_pins_it(cast, settings):
    settings.THREADLESS_PROXY_ENV_KEYS = True
    settings.THREADLESS_PROVIDER_ENV_ALLOW = ["OPENAI_API_KEY"]
    refused = cast.a.put(
        "/v1/proxy/settings/openai",
        {"base_url": "http://127.0.0.1:9/v1", "api_key_env": "OPENAI_API_KEY"},
        format="json",
    )
    assert refused.status_code == 400 and "api.openai.com" in refused.json()["error"]["message"]
    ok = cast.a.put(
        "/v1/proxy/settings/openai", {"base_url": None, "api_key_env": "OPENAI_API_KEY"}, format="json"
    )
    assert ok.status_code == 200 and ok.json()["api_key_env"] == "OPENAI_API_KEY"
    not_listed = cast.a.put("/v1/proxy/settings/openai", {"api_key_env": "SECRET_KEY"}, format="json")
    assert not_listed.status_code == 400


async def test_a_pinned_environment_key_is_sent_upstream_and_refused_once_the_pin_is_gone(
    cast, upstream, settings, monkeypatch
):
    from asgiref.sync import sync_to_async

    monkeypatch.setenv("STUB_PROVIDER_KEY", "sk-from-env")
    settings.THREADLESS_PROXY_ENV_KEYS = True
    settings.THREADLESS_PROVIDER_ENV_ALLOW = ["STUB_PROVIDER_KEY@127.0.0.1"]
    await sync_to_async(proxy_services.upstream_setting_set)(
        project=cast.project_a,
        provider="openai",
        base_url=upstream.openai_url,
        api_key_env="STUB_PROVIDER_KEY",
    )
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    response = await _post(CHAT, body, {"Authorization": f"Bearer {cast.key_a}"})
    assert response.status_code == 200
    assert upstream.requests[-1].headers["authorization"] == "Bearer sk-from-env"
    settings.THREADLESS_PROVIDER_ENV_ALLOW = ["STUB_PROVIDER_KEY"]  # now only its provider's official host
    refused = await _post(CHAT, body, {"Authorization": f"Bearer {cast.key_a}"})
    assert refused.status_code == 400 and "api_key_env" in orjson.loads(refused.content)["error"]["message"]
    assert len(upstream.requests) == 1


def test_the_management_command_sets_and_shows_an_upstream(cast, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("sk-cli-key\n"))
    out = io.StringIO()
    call_command(
        "proxy_upstream",
        "--project",
        cast.project_a.pk,
        "--provider",
        "openai",
        "--base-url",
        "https://gateway.example.com/v1",
        "--api-key-stdin",
        "--json",
        stdout=out,
    )
    shown = json.loads(out.getvalue())["openai"]
    assert shown["base_url"] == "https://gateway.example.com/v1" and shown["api_key_set"] is True
    assert "sk-cli-key" not in out.getvalue()
    assert secret_value(project_id=cast.project_a.pk, name="proxy.openai") == "sk-cli-key"


def test_the_console_page_saves_an_upstream_for_staff_and_refuses_others(cast):
    staff = Client()
    staff.force_login(cast.staff)
    page = staff.get(f"/manage/proxy/?project={cast.project_a.pk}")
    assert page.status_code == 200 and b"Proxy upstreams" in page.content
    assert b"<code>/v1/openai/responses</code>" in page.content  # the Responses route uses these too
    saved = staff.post(
        "/manage/proxy/",
        {
            "project": cast.project_a.pk,
            "provider": "openai",
            "openai-base_url": "https://gw.example.com/v1",
            "openai-api_key": "sk-console",
        },
    )
    assert saved.status_code == 302
    assert proxy_services.upstream_settings(project=cast.project_a)["openai"]["api_key_set"] is True
    shown = staff.get(f"/manage/proxy/?project={cast.project_a.pk}")
    assert b"https://gw.example.com/v1" in shown.content and b"sk-console" not in shown.content
    bad = staff.post(
        "/manage/proxy/", {"project": cast.project_a.pk, "provider": "openai", "openai-base_url": "ftp://x"}
    )
    assert bad.status_code == 400
    visitor = Client()
    visitor.force_login(cast.user)
    assert visitor.get("/manage/proxy/").status_code == 403


async def test_the_stored_key_never_goes_to_a_base_url_the_request_names_instead(cast, upstream):
    from asgiref.sync import sync_to_async

    await sync_to_async(proxy_services.upstream_setting_set)(
        project=cast.project_a,
        provider="openai",
        base_url="https://api.openai.com/v1",
        api_key="sk-stored-secret",
    )
    response = await _post(
        CHAT,
        {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        {"Authorization": f"Bearer {cast.key_a}", "X-Upstream-Base-Url": upstream.openai_url},
    )
    assert response.status_code == 200
    sent = upstream.requests[-1].headers
    assert "authorization" not in sent and "sk-stored-secret" not in json.dumps(sent)
