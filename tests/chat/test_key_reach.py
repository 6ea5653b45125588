"""What an agent config can reach: never a proxy upstream key by name, never a base URL that
carries user info, a query or a fragment. The attacker's host is a listener on 127.0.0.2."""

from __future__ import annotations

import pytest

from chat import services
from chat.models import Agent
from common.errors import InvalidRequest
from projects.services import secret_set
from proxy import services as proxy_services

pytestmark = pytest.mark.django_db

PROXY_KEY = "sk-proxy-upstream-secret-0123456789"


@pytest.fixture(autouse=True)
def _attacker_reachable(settings):
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1", "127.0.0.2"]


def _llm(base_url: str, **extra) -> dict:
    return {
        "workflow": [
            {"id": "llm", "type": "llm", "provider": "openai", "model": "m", "baseUrl": base_url, **extra}
        ]
    }


@pytest.mark.parametrize("name", ["proxy.openai", "proxy.anthropic", "PROXY.openai"])
def test_an_agent_config_cannot_name_a_proxy_upstream_key(cast, attacker, name):
    proxy_services.upstream_setting_set(project=cast.project_a, provider="openai", api_key=PROXY_KEY)
    with pytest.raises(InvalidRequest) as refused:
        services.agent_create(
            project=cast.project_a, name="thief", config=_llm(attacker.url + "/v1", apiKeySecret=name)
        )
    assert "apiKeySecret" in refused.value.message and "reserved" in refused.value.message
    assert attacker.received == []


def test_a_config_written_past_validation_still_cannot_use_a_proxy_upstream_key(cast, attacker):
    proxy_services.upstream_setting_set(project=cast.project_a, provider="openai", api_key=PROXY_KEY)
    agent = services.agent_create(project=cast.project_a, name="thief", config=_llm(attacker.url + "/v1"))
    config = _llm(attacker.url + "/v1", apiKeySecret="proxy.openai")
    Agent.objects.filter(pk=agent.pk).update(config=config)
    agent.refresh_from_db()
    conversation, _ = services.conversation_create(agent=agent)
    snap = services.turn_say(conversation=conversation, text="hi")
    assert "proxy upstream key" in snap["taskErrors"][0]["text"]
    assert PROXY_KEY not in attacker.everything()


def test_an_ordinary_secret_still_goes_to_the_tenants_own_base_url(cast, attacker):
    secret_set(project=cast.project_a, name="MY_KEY", value="sk-tenant-own-0123456789")
    agent = services.agent_create(
        project=cast.project_a, name="ok", config=_llm(attacker.url + "/v1", apiKeySecret="MY_KEY")
    )
    conversation, _ = services.conversation_create(agent=agent)
    services.turn_say(conversation=conversation, text="hi")
    assert attacker.received[-1].headers["authorization"] == "Bearer sk-tenant-own-0123456789"


@pytest.mark.parametrize("suffix", ["/v1#", "/v1?x=1", "/v1/../admin"])
def test_an_llm_base_url_with_a_query_fragment_or_dot_segment_is_400_naming_the_field(cast, attacker, suffix):
    with pytest.raises(InvalidRequest) as refused:
        services.agent_create(project=cast.project_a, name="x", config=_llm(attacker.url + suffix))
    assert refused.value.message.startswith("workflow[0].baseUrl")


def test_user_info_is_refused_in_llm_and_http_call_urls(cast, attacker):
    with pytest.raises(InvalidRequest) as llm:
        services.agent_create(
            project=cast.project_a, name="x", config=_llm(f"http://u:p@{attacker.host}:{attacker.port}/v1")
        )
    assert llm.value.message.startswith("workflow[0].baseUrl")
    http = {
        "workflow": [
            {
                "id": "get",
                "type": "http_call",
                "request": {"url": f"http://u:p@{attacker.host}:{attacker.port}/x"},
            }
        ]
    }
    with pytest.raises(InvalidRequest) as call:
        services.agent_create(project=cast.project_a, name="y", config=http)
    assert "request.url" in call.value.message and "user info" in call.value.message


def test_the_console_secret_store_refuses_proxy_names(cast):
    from django.test import Client

    console = Client()
    console.force_login(cast.staff)
    answer = console.post(
        "/manage/agents/secrets/",
        {"project": cast.project_a.pk, "name": "proxy.openai", "value": "sk-planted-0123456789"},
    )
    assert answer.status_code == 400
    assert not proxy_services.upstream_settings(project=cast.project_a)["openai"]["api_key_set"]
