"""behavior_rules and output sets, the seed's shorthand, and turn liveness (leases)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from chat import runner, services
from chat.leases import Leases
from chat.tasktypes.behavior_rules import input_matches
from common.errors import Conflict
from memories.models import Turn
from projects import services as project_services

pytestmark = pytest.mark.django_db


def text_out(text: str) -> dict:
    return {"outputs": [{"valueAlternatives": [{"type": "text", "text": text}]}]}


def test_input_expressions_are_words_or_phrases_with_wildcards():
    assert input_matches("Hello there", ["hello"])
    assert input_matches("what's the WEATHER like?", ["weather"])
    assert not input_matches("weathered", ["weather"])
    assert input_matches("weathered", ["weather*"])
    assert input_matches("I want a refund now", ["want * refund"])
    assert input_matches("anything", ["*"])
    assert input_matches("good morning", ["hi", "good morning"])


RULES = [
    {
        "name": "greet",
        "actions": ["greet"],
        "conditions": [{"type": "inputmatcher", "configs": {"expressions": "hello, hi"}}],
    },
    {
        "name": "second greeting",
        "actions": ["greet_again"],
        "conditions": [
            {"type": "actionmatcher", "configs": {"actions": "greet"}},
            {"type": "actionmatcher", "configs": {"actions": "greet", "occurrence": "lastStep"}},
        ],
    },
    {
        "name": "first time",
        "actions": ["welcome"],
        "conditions": [{"type": "actionmatcher", "configs": {"actions": ["welcome"], "occurrence": "never"}}],
    },
    {
        "name": "not a greeting",
        "actions": ["other"],
        "conditions": [
            {
                "type": "negation",
                "conditions": [{"type": "inputmatcher", "configs": {"expressions": "hello, hi"}}],
            }
        ],
    },
    {
        "name": "either",
        "actions": ["either"],
        "conditions": [
            {
                "type": "connector",
                "configs": {"operator": "OR"},
                "conditions": [
                    {"type": "inputmatcher", "configs": {"expressions": "bye"}},
                    {"type": "actionmatcher", "configs": {"actions": "greet", "occurrence": "anyStep"}},
                ],
            }
        ],
    },
]


def test_rules_emit_actions_in_order_and_outputs_follow_them(make_agent):
    agent = make_agent(
        {
            "behaviorRules": RULES,
            "outputSet": [
                {"action": "greet", **text_out("Hello!")},
                {"action": "greet_again", **text_out("Hello again!")},
                {"action": "welcome", **text_out("Welcome.")},
                {"action": "other", **text_out("Hm?")},
            ],
        }
    )
    conversation, _ = services.conversation_create(agent=agent)
    first = services.turn_say(conversation=conversation, text="hi")
    assert first["actions"] == ["greet", "welcome", "either"]
    assert [o["text"] for o in first["output"]] == ["Hello!", "Welcome."]
    second = services.turn_say(conversation=conversation, text="hello")
    assert second["actions"] == ["greet", "greet_again", "either"]
    assert [o["text"] for o in second["output"]] == ["Hello!", "Hello again!"]
    third = services.turn_say(conversation=conversation, text="what?")
    assert third["actions"] == ["other", "either"] and third["output"] == [{"type": "text", "text": "Hm?"}]


def test_a_task_with_actions_runs_only_when_one_was_emitted(make_agent, stub):
    stub.set("/forecast", json_body={"temp": 7})
    agent = make_agent(
        {
            "behaviorRules": [
                {
                    "name": "w",
                    "actions": ["get_weather"],
                    "conditions": [{"type": "inputmatcher", "configs": {"expressions": "weather"}}],
                }
            ],
            "workflow": [
                {
                    "id": "weather",
                    "type": "http_call",
                    "actions": ["get_weather"],
                    "storeAs": "weather",
                    "request": {"url": stub.url + "/forecast"},
                }
            ],
            "outputSet": [{"action": "get_weather", **text_out("Checked.")}],
        }
    )
    conversation, _ = services.conversation_create(agent=agent)
    stub.requests.clear()
    services.turn_say(conversation=conversation, text="hello")
    assert stub.requests == []
    snap = services.turn_say(conversation=conversation, text="weather please")
    assert len(stub.requests) == 1 and snap["output"] == [{"type": "text", "text": "Checked."}]


def test_the_seeds_rule_routes_a_failure_to_a_fallback_on_the_next_turn(make_agent):
    from tests.chat.stubs import refused_url

    agent = make_agent(
        {
            "memoryPolicy": {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}},
            "workflow": [{"id": "ai.labs.httpcalls", "type": "http_call", "request": {"url": refused_url()}}],
            "behaviorRules": [
                {
                    "name": "Handle Weather Failure",
                    "actions": ["fallback_response"],
                    "conditions": [
                        {
                            "type": "actionmatcher",
                            "configs": {"actions": "task_failed_ai.labs.httpcalls", "occurrence": "lastStep"},
                        }
                    ],
                }
            ],
            "outputSet": [{"action": "fallback_response", **text_out("The weather service is down.")}],
        }
    )
    conversation, _ = services.conversation_create(agent=agent)
    assert services.turn_say(conversation=conversation, text="weather?")["actions"] == [
        "task_failed_ai.labs.httpcalls"
    ]
    snap = services.turn_say(conversation=conversation, text="weather?")
    assert snap["actions"][0] == "fallback_response"


def test_an_expired_lease_reads_as_interrupted_and_frees_the_conversation(make_agent):
    agent = make_agent({"workflow": [{"id": "llm", "type": "llm", "provider": "demo"}]})
    conversation, _ = services.conversation_create(agent=agent)
    handle = runner.turn_begin(conversation=conversation, text="hello")  # its process "dies" here
    with pytest.raises(Conflict):
        services.turn_say(conversation=conversation, text="again")
    Turn.objects.filter(memory=conversation.memory, number=handle.turn).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    from chat.selectors import conversation_state

    assert conversation_state(conversation=conversation) == "EXECUTION_INTERRUPTED"
    snap = services.turn_rerun(conversation=conversation)
    assert snap["turn"] == 1 and snap["conversationState"] == "READY"
    assert services.turn_say(conversation=conversation, text="next")["turn"] == 2


def test_a_turn_opens_in_progress_under_its_lease_and_the_process_renews_held_leases(make_agent):
    agent = make_agent({"workflow": [{"id": "llm", "type": "llm", "provider": "demo"}]})
    conversation, _ = services.conversation_create(agent=agent)
    handle = runner.turn_begin(conversation=conversation, text="hello")
    turn = Turn.objects.get(memory=conversation.memory, number=handle.turn)
    assert (turn.state, turn.attempt, turn.input) == (Turn.State.IN_PROGRESS, 1, "hello")
    assert turn.lease_expires_at > timezone.now()
    soon = timezone.now() + timedelta(seconds=1)
    Turn.objects.filter(pk=turn.pk).update(lease_expires_at=soon)
    leases = Leases()
    key = leases.hold(handle.memory_id, handle.turn)
    assert leases.renew() == 1
    assert Turn.objects.get(pk=turn.pk).lease_expires_at > soon + timedelta(seconds=5)
    leases.release(key)
    assert leases.renew() == 0  # released: no longer this process's to renew


def test_a_say_on_a_turn_whose_lease_ran_out_marks_it_interrupted_and_opens_the_next(make_agent):
    agent = make_agent({"workflow": [{"id": "llm", "type": "llm", "provider": "demo"}]})
    conversation, _ = services.conversation_create(agent=agent)
    handle = runner.turn_begin(conversation=conversation, text="hello")
    Turn.objects.filter(memory=conversation.memory, number=handle.turn).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    snap = services.turn_say(conversation=conversation, text="again")
    assert snap["turn"] == handle.turn + 1
    assert (
        Turn.objects.get(memory=conversation.memory, number=handle.turn).state
        == Turn.State.EXECUTION_INTERRUPTED
    )


def test_agent_ensure_demo_is_idempotent(cast):
    first = services.agent_ensure_demo(project=cast.project_a, demo={})
    assert set(first) == {"agent_id", "agent_slug", "publishable_key"}
    assert first["publishable_key"].startswith("tl_pub_")
    assert services.agent_ensure_demo(project=cast.project_a, demo=first) == first


def test_the_secret_store_encrypts_and_lists_only_hints(cast):
    from projects.models import Secret
    from projects.selectors import secret_list

    project_services.secret_set(project=cast.project_a, name="openai", value="sk-abcdefghijklmnop1234")
    stored = Secret.objects.get()
    assert "sk-abc" not in stored.ciphertext
    assert secret_list(project=cast.project_a)[0]["hint"] == "…1234"
    assert (
        project_services.secret_value(project_id=cast.project_a.id, name="openai")
        == "sk-abcdefghijklmnop1234"
    )
    assert secret_list(project=cast.project_b) == []
    project_services.secret_delete(project=cast.project_a, name="openai")
    assert not Secret.objects.exists()
