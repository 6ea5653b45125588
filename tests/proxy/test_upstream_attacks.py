"""Attacks on the proxy's upstream settings and answers, each against a real listener on
127.0.0.2 standing in for the attacker's host (harness.attacker), which records what it got.

Project B stores its provider key for its upstream (the stub on 127.0.0.1). The attacker holds
either a console account of another project, or B's project key alone; neither may make B's
provider key, or B's users' messages, arrive at the attacker's host.
"""

from __future__ import annotations

import logging

import orjson
import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model
from django.test import AsyncClient, Client

from memories.models import Memory
from projects.services import project_create, secret_value
from providers import egress
from proxy import services as proxy_services
from proxy.models import UpstreamSetting

pytestmark = pytest.mark.django_db(transaction=True)

CHAT = "/v1/openai/chat/completions"
B_KEY = "sk-bravo-provider-secret-0123456789"
BODY = {"model": "m", "messages": [{"role": "user", "content": "my card number is 4111"}]}


@pytest.fixture(autouse=True)
def _attacker_reachable(settings):
    # The attacker's host must pass the address check, so what stops the attack is the rule under test.
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1", "127.0.0.2"]


@pytest.fixture
def bravo(cast, upstream):
    proxy_services.upstream_setting_set(
        project=cast.project_b, provider="openai", base_url=upstream.openai_url, api_key=B_KEY
    )
    return cast.project_b


async def _call(key: str, body=BODY, **headers):
    return await AsyncClient().post(
        CHAT,
        orjson.dumps(body),
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}", **headers},
    )


def async_call(key: str, body=BODY, **headers):
    """A proxy call from a sync test (the view is async; the client's loop runs it)."""
    return async_to_sync(_call)(key, body, **headers)


# --- a console account of another project --------------------------------------------------------


def test_a_staff_member_of_another_project_cannot_point_b_at_the_attacker(cast, bravo, upstream, attacker):
    mallory = get_user_model().objects.create_user("mallory", password="mallory-pass-123", is_staff=True)
    project_create(name="Charlie").members.add(mallory)
    console = Client()
    console.force_login(mallory)
    page = console.get("/manage/proxy/")
    assert page.status_code == 200 and b"Bravo" not in page.content
    posted = console.post(
        "/manage/proxy/", {"project": bravo.pk, "provider": "openai", "openai-base_url": attacker.url + "/v1"}
    )
    assert posted.status_code == 404
    answer = async_call(cast.key_b)
    assert answer.status_code == 200
    assert upstream.requests[-1].headers["authorization"] == f"Bearer {B_KEY}"
    assert attacker.received == []


# --- B's project key alone -------------------------------------------------------------------------


def test_changing_the_base_url_removes_the_stored_key_so_it_never_reaches_the_new_host(cast, bravo, attacker):
    moved = cast.b.put("/v1/proxy/settings/openai", {"base_url": attacker.url + "/v1"}, format="json")
    assert moved.status_code == 200
    assert moved.json()["api_key_set"] is False and moved.json()["api_key_cleared"] is True
    with pytest.raises(LookupError):
        secret_value(project_id=bravo.pk, name="proxy.openai")
    answer = async_call(cast.key_b)
    assert answer.status_code == 200  # the attacker answered, but got no key
    assert len(attacker.received) == 1
    assert "authorization" not in attacker.received[0].headers
    assert B_KEY not in attacker.everything()


def test_a_base_url_change_that_brings_its_own_key_keeps_that_key(cast, bravo, attacker):
    moved = cast.b.put(
        "/v1/proxy/settings/openai",
        {"base_url": attacker.url + "/v1", "api_key": "sk-new-host"},
        format="json",
    )
    assert moved.json()["api_key_set"] is True and moved.json()["api_key_cleared"] is False
    assert secret_value(project_id=bravo.pk, name="proxy.openai") == "sk-new-host"
    unchanged = cast.b.put("/v1/proxy/settings/openai", {"base_url": attacker.url + "/v1/"}, format="json")
    assert unchanged.json()["api_key_set"] is True and unchanged.json()["api_key_cleared"] is False


def test_the_console_says_when_a_base_url_change_removed_the_key(cast, bravo, attacker):
    console = Client()
    console.force_login(cast.staff)
    saved = console.post(
        "/manage/proxy/",
        {"project": bravo.pk, "provider": "openai", "openai-base_url": attacker.url + "/v1"},
        follow=True,
    )
    assert saved.status_code == 200
    assert b"The stored key was removed" in saved.content
    assert proxy_services.upstream_settings(project=bravo)["openai"]["api_key_set"] is False


@pytest.mark.parametrize(
    "suffix",
    [
        "/v1/organization/admin_api_keys#",
        "/v1/organization/admin_api_keys?x=",
        "/v1?",
        "/v1/../admin",
        "/v1/%2e%2e/admin",
    ],
)
def test_a_base_url_with_a_query_fragment_or_dot_segments_is_400_naming_the_field_everywhere(
    cast, bravo, upstream, attacker, suffix
):
    url = attacker.url + suffix
    put = cast.b.put("/v1/proxy/settings/openai", {"base_url": url}, format="json")
    assert put.status_code == 400 and put.json()["error"]["message"].startswith("base_url:")
    header = async_call(cast.key_b, **{"X-Upstream-Base-Url": url, "X-Upstream-Authorization": "sk-own"})
    assert header.status_code == 400
    assert orjson.loads(header.content)["error"]["message"].startswith("X-Upstream-Base-Url:")
    console = Client()
    console.force_login(cast.staff)
    form = console.post("/manage/proxy/", {"project": bravo.pk, "provider": "openai", "openai-base_url": url})
    assert form.status_code == 400 and b"base_url:" in form.content
    assert attacker.received == []
    assert UpstreamSetting.objects.get(project=bravo, provider="openai").base_url == upstream.openai_url


def test_a_base_url_with_user_info_is_400(cast, bravo, attacker):
    url = f"http://user:pw@{attacker.host}:{attacker.port}/v1"
    put = cast.b.put("/v1/proxy/settings/openai", {"base_url": url}, format="json")
    assert put.status_code == 400 and "user info" in put.json()["error"]["message"]
    header = async_call(cast.key_b, **{"X-Upstream-Base-Url": url, "X-Upstream-Authorization": "sk-own"})
    assert header.status_code == 400
    assert attacker.received == []


# --- the operator's environment keys ---------------------------------------------------------------


def test_the_proxy_lends_no_environment_key_unless_the_operator_opts_in(
    cast, attacker, settings, monkeypatch
):
    monkeypatch.setenv("OPERATOR_KEY", "sk-operator-0123456789")
    settings.THREADLESS_PROVIDER_ENV_ALLOW = [f"OPERATOR_KEY@{attacker.host}"]
    assert settings.THREADLESS_PROXY_ENV_KEYS is False  # the default
    refused = cast.b.put(
        "/v1/proxy/settings/openai",
        {"base_url": attacker.url + "/v1", "api_key_env": "OPERATOR_KEY"},
        format="json",
    )
    assert refused.status_code == 400 and "THREADLESS_PROXY_ENV_KEYS" in refused.json()["error"]["message"]
    # A setting saved while the operator allowed it lends nothing once the switch is off.
    UpstreamSetting.objects.update_or_create(
        project=cast.project_b,
        provider="openai",
        defaults={"base_url": attacker.url + "/v1", "api_key_env": "OPERATOR_KEY"},
    )
    assert async_call(cast.key_b).status_code == 200
    assert "sk-operator" not in attacker.everything()


def test_an_environment_key_is_pinned_to_its_path_prefix_as_well_as_its_host(
    cast, attacker, settings, monkeypatch
):
    monkeypatch.setenv("OPERATOR_KEY", "sk-operator-0123456789")
    settings.THREADLESS_PROXY_ENV_KEYS = True
    settings.THREADLESS_PROVIDER_ENV_ALLOW = [f"OPERATOR_KEY@{attacker.host}:{attacker.port}/v1"]
    elsewhere = cast.b.put(
        "/v1/proxy/settings/openai",
        {"base_url": attacker.url + "/organization", "api_key_env": "OPERATOR_KEY"},
        format="json",
    )
    assert elsewhere.status_code == 400 and elsewhere.json()["error"]["message"].startswith("api_key_env:")
    pinned = cast.b.put(
        "/v1/proxy/settings/openai",
        {"base_url": attacker.url + "/v1", "api_key_env": "OPERATOR_KEY"},
        format="json",
    )
    assert pinned.status_code == 200
    assert async_call(cast.key_b).status_code == 200
    assert attacker.received[-1].path == "/v1/chat/completions"
    assert attacker.received[-1].headers["authorization"] == "Bearer sk-operator-0123456789"


@pytest.mark.parametrize(
    "base_url,allowed",
    [
        (None, True),
        ("https://api.openai.com/v1", True),
        ("https://api.openai.com/v1/", True),
        ("https://api.openai.com", False),
        ("https://api.openai.com/organization", False),
        ("https://api.openai.com/v1/organization/admin_api_keys#", False),
        ("https://api.openai.com/v1?", False),
        ("https://x@api.openai.com/v1", False),
        ("https://api.openai.com/v1/../organization", False),
    ],
)
def test_the_official_host_takes_the_key_under_v1_only(settings, base_url, allowed):
    settings.THREADLESS_PROVIDER_ENV_ALLOW = ["OPENAI_API_KEY"]
    refusal = egress.provider_env_refusal("OPENAI_API_KEY", provider="openai", base_url=base_url)
    assert (refusal is None) is allowed, refusal


def test_the_official_prefix_can_be_changed_per_entry(settings):
    settings.THREADLESS_PROVIDER_ENV_ALLOW = ["OPENAI_API_KEY@api.openai.com/v2"]
    assert (
        egress.provider_env_refusal("OPENAI_API_KEY", provider="openai", base_url="https://api.openai.com/v2")
        is None
    )
    assert egress.provider_env_refusal(
        "OPENAI_API_KEY", provider="openai", base_url="https://api.openai.com/v1"
    )
    settings.THREADLESS_PROVIDER_ENV_ALLOW = ["ANTHROPIC_API_KEY"]  # Anthropic's clients add /v1/messages
    assert (
        egress.provider_env_refusal(
            "ANTHROPIC_API_KEY", provider="anthropic", base_url="https://api.anthropic.com"
        )
        is None
    )


# --- what comes back ------------------------------------------------------------------------------


def test_the_user_field_follows_the_external_id_rules(cast, bravo, upstream):
    answer = async_call(cast.key_b, {**BODY, "user": "bob\n\u202eevil\x00"})
    assert answer.status_code == 400
    assert orjson.loads(answer.content)["error"]["message"].startswith("user:")
    assert upstream.requests == [] and not Memory.objects.filter(project=bravo).exists()
    header = async_call(cast.key_b, **{"X-Threadless-External-Id": "eve\x7f"})
    assert header.status_code == 400 and upstream.requests == []
    fine = async_call(cast.key_b, {**BODY, "user": "bob"})
    assert fine.status_code == 200 and Memory.objects.filter(project=bravo, external_id="bob").exists()


def test_an_egress_refusal_reads_the_same_whether_the_name_resolves_or_not(
    cast, monkeypatch, settings, caplog
):
    settings.THREADLESS_EGRESS_ALLOW = []

    def resolve(host, port):
        if host == "internal.example":
            return ["10.20.30.40"]
        raise OSError("no such host")

    monkeypatch.setattr(egress, "resolve", resolve)
    texts = []
    with caplog.at_level(logging.WARNING, logger="threadless.proxy"):
        for host in ("internal.example", "missing.example"):
            answer = async_call(
                cast.key_b,
                **{"X-Upstream-Base-Url": f"http://{host}/v1", "X-Upstream-Authorization": "sk-own"},
            )
            assert answer.status_code == 502
            texts.append(orjson.loads(answer.content)["error"]["message"].replace(host, "HOST"))
    assert texts[0] == texts[1]
    assert "private" not in texts[0] and "resolve" not in texts[0]
    assert "could not be resolved" in caplog.text and "10.20.30.40" in caplog.text  # the staff log has why


async def test_a_cookie_an_upstream_sets_on_one_projects_call_is_never_sent_on_anothers(
    cast, bravo, upstream
):
    """Both projects' calls share the server's upstream connections, and nothing else: a cookie
    the upstream sets on A's call (a session, a tracking id) does not ride along on B's."""
    upstream.push(headers={"Set-Cookie": "session=alpha-secret; Path=/"})
    alpha = await _call(
        cast.key_a, **{"X-Upstream-Base-Url": upstream.openai_url, "X-Upstream-Authorization": "sk-alpha"}
    )
    bravo_call = await _call(cast.key_b)  # B's stored upstream: the same stub
    assert alpha.status_code == bravo_call.status_code == 200
    assert "set-cookie" not in alpha  # not passed back to A's client either
    assert [r.headers.get("cookie") for r in upstream.requests] == [None, None]


def test_a_2xx_html_upstream_answer_is_not_served_from_our_origin(cast, attacker):
    attacker.reply(b"<html><script>steal(document.cookie)</script></html>", content_type="text/html")
    answer = async_call(
        cast.key_b, **{"X-Upstream-Base-Url": attacker.url + "/v1", "X-Upstream-Authorization": "sk-own"}
    )
    assert len(attacker.received) == 1
    assert answer.status_code == 502
    assert (
        answer["Content-Type"].startswith("application/json")
        and answer["X-Content-Type-Options"] == "nosniff"
    )
    assert b"<script>" not in answer.content
    assert "text/html" in orjson.loads(answer.content)["error"]["message"]


def test_a_json_answer_is_served_as_json_whatever_type_the_upstream_named(cast, attacker):
    attacker.reply(
        orjson.dumps({"id": "x", "object": "chat.completion", "choices": []}), content_type="text/html"
    )
    answer = async_call(
        cast.key_b, **{"X-Upstream-Base-Url": attacker.url + "/v1", "X-Upstream-Authorization": "sk-own"}
    )
    assert answer.status_code == 200 and answer["Content-Type"] == "application/json"


def test_a_base_url_saved_before_the_rule_sends_nothing_with_the_stored_key(cast, bravo, upstream, attacker):
    UpstreamSetting.objects.filter(project=bravo, provider="openai").update(
        base_url=attacker.url + "/v1/organization/admin_api_keys#"
    )
    answer = async_call(cast.key_b)
    assert answer.status_code == 400
    assert orjson.loads(answer.content)["error"]["message"].startswith("base_url:")
    assert attacker.received == [] and upstream.requests == []
