"""The server's provider keys and the background model (`project_background --model`), written as
the attack: a local 'attacker' server speaking chat completions records every request it receives."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memories import services
from memories.models import Fact
from tests.fixtures.background import converse, drain
from tests.fixtures.stubs import OpenAIStub, chat_reply

pytestmark = pytest.mark.django_db

OPERATOR_KEY = "sk-operator-own-key-1a2b3c4d5e6f"
FACTS = {"facts": [{"text": "User lives in Lisbon", "slot": "location", "source": [1], "confidence": 0.9}]}


@pytest.fixture
def attacker():
    with OpenAIStub(lambda body: (200, chat_reply(json.dumps(FACTS)))) as stub:
        yield stub


@pytest.fixture(autouse=True)
def _setup(monkeypatch, settings):
    monkeypatch.setenv("OPENAI_API_KEY", OPERATOR_KEY)
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1"]  # the attacker is reachable: only the key rule stops it
    settings.THREADLESS_PROVIDER_ENV_ALLOW = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"]


def set_model(project, config: dict) -> None:
    call_command(
        "project_background", "--project", project.id, "--model", json.dumps(config), stdout=StringIO()
    )


def test_the_background_model_cannot_be_pointed_at_an_attacker_with_the_operators_key(cast, attacker):
    config = {"provider": "openai", "model": "m", "baseUrl": attacker.url, "apiKeyEnv": "OPENAI_API_KEY"}
    with pytest.raises(CommandError) as caught:
        set_model(cast.project_a, config)
    assert str(caught.value).startswith("--model.baseUrl:") and "OPENAI_API_KEY" in str(caught.value)
    cast.project_a.refresh_from_db()
    assert cast.project_a.model_config is None
    assert attacker.requests == []


def test_a_background_model_written_past_validation_never_gets_the_key(cast, attacker):
    cast.project_a.model_config = {
        "provider": "openai",
        "model": "m",
        "baseUrl": attacker.url,
        "apiKeyEnv": "OPENAI_API_KEY",
    }
    cast.project_a.save()
    memory, _ = services.memory_create(project=cast.project_a)
    converse(memory, [["I live in Lisbon.", "ok"]])
    drain()
    assert attacker.requests == []  # refused before any request: no key, no prompt
    assert Fact.objects.get(memory=memory).extractor == "rules"


def test_a_background_model_with_a_key_allowed_for_its_host_is_used(cast, attacker, monkeypatch, settings):
    settings.THREADLESS_PROVIDER_ENV_ALLOW = ["OPENAI_API_KEY", "STUB_LLM_KEY@127.0.0.1"]
    monkeypatch.setenv("STUB_LLM_KEY", "sk-local-model-key")
    set_model(
        cast.project_a,
        {"provider": "openai", "model": "stub-model", "baseUrl": attacker.url, "apiKeyEnv": "STUB_LLM_KEY"},
    )
    memory, _ = services.memory_create(project=cast.project_a)
    converse(memory, [["I live in Lisbon.", "ok"]])
    drain()
    assert attacker.requests and attacker.requests[0]["auth"] == "Bearer sk-local-model-key"
    assert Fact.objects.get(memory=memory).extractor == "llm"


@pytest.mark.parametrize(
    "config,field",
    [
        ({"provider": "openai", "model": "m", "apiKeyEnv": "SECRET_KEY"}, "apiKeyEnv"),
        ({"provider": "anthropic", "model": "m", "apiKeyEnv": "OPENAI_API_KEY"}, "baseUrl"),
        ({"provider": "openai", "model": "m", "baseUrl": "ftp://x"}, "baseUrl"),
        ({"provider": "mystery", "model": "m"}, "provider"),
    ],
)
def test_a_bad_background_model_is_refused_naming_the_field(cast, config, field):
    with pytest.raises(CommandError) as caught:
        set_model(cast.project_a, config)
    assert str(caught.value).startswith(f"--model.{field}:"), str(caught.value)


def test_the_official_host_is_fine_for_a_bare_name(cast):
    set_model(cast.project_a, {"provider": "openai", "model": "gpt-4o-mini", "apiKeyEnv": "OPENAI_API_KEY"})
    cast.project_a.refresh_from_db()
    assert cast.project_a.model_config["apiKeyEnv"] == "OPENAI_API_KEY"
