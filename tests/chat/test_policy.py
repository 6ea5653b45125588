"""SPEC 6.2 to the letter: what a failed task leaves behind, for all four policy settings."""

from __future__ import annotations

import pytest

from chat import services
from chat.models import TaskRun
from memories.context import context_build
from memories.models import Entry, ErrorDigest
from tests.chat.conftest import policy
from tests.chat.stubs import refused_url

pytestmark = pytest.mark.django_db

TASK = "ai.labs.httpcalls"


def weather_task(url: str, **extra) -> dict:
    return {
        "id": TASK,
        "type": "http_call",
        "storeAs": "weather",
        "request": {"method": "GET", "url": url + "/forecast?q={{ input }}", "timeoutMs": 3000},
        **extra,
    }


def entries(conversation) -> list[tuple]:
    return list(
        Entry.objects.filter(memory=conversation.memory)
        .order_by("seq")
        .values_list("kind", "role", "task_id", "committed")
    )


def say(agent, text="What's the weather in Oslo?"):
    conversation, _ = services.conversation_create(agent=agent)
    return conversation, services.turn_say(conversation=conversation, text=text)


@pytest.fixture
def failing_api(stub):
    stub.set("/forecast", status=503, json_body={"message": "Service Unavailable: upstream down"})
    return stub


def expected_text(stub) -> str:
    return (
        f"Task '{TASK}' failed: API call to 127.0.0.1:{stub.port} failed: HTTP 503: "
        "Service Unavailable: upstream down"
    )


def test_default_mode_reports_to_the_caller_only_and_keeps_the_raw_error_committed(make_agent, failing_api):
    agent = make_agent({**policy(None), "workflow": [weather_task(failing_api.url)]})
    conversation, snap = say(agent)
    assert snap["conversationState"] == "ERROR"
    assert snap["output"] == [] and snap["actions"] == []
    assert snap["taskErrors"] == [
        {"type": "errorDigest", "taskId": TASK, "taskType": "http_call", "text": expected_text(failing_api)}
    ]
    assert entries(conversation) == [
        ("message", "user", "", True),
        ("data", "", TASK, True),
        ("error", "", TASK, True),
    ]
    assert not ErrorDigest.objects.exists()


def test_digest_mode_uncommits_the_raw_output_and_adds_a_digest_and_the_action(make_agent, failing_api):
    agent = make_agent({**policy("digest"), "workflow": [weather_task(failing_api.url)]})
    conversation, snap = say(agent)
    assert snap["conversationState"] == "ERROR"
    assert snap["actions"] == [f"task_failed_{TASK}"]
    assert [e["text"] for e in snap["taskErrors"]] == [expected_text(failing_api)]
    assert entries(conversation) == [
        ("message", "user", "", True),
        ("data", "", TASK, False),
        ("error", "", TASK, False),
        ("digest", "", TASK, True),
        ("action", "", TASK, True),
    ]
    digest = ErrorDigest.objects.get()
    assert digest.text == expected_text(failing_api)
    assert digest.task_type == "http_call" and digest.error_type == "provider" and digest.agent_id == agent.id
    # The raw error keeps the URL for staff, the digest does not.
    raw = Entry.objects.get(kind="error").content
    assert "/forecast?q=" in raw and "/forecast" not in digest.text
    # The next turn's model context sees the digest, not the raw error.
    ctx = context_build(
        memory=conversation.memory,
        new_messages=[{"role": "user", "content": "and now?"}],
        budget_tokens=60000,
    )
    assert expected_text(failing_api) in ctx.context_text
    assert "/forecast" not in ctx.context_text


def test_exclude_all_hides_everything_and_reports_nothing(make_agent, failing_api):
    agent = make_agent({**policy("exclude_all"), "workflow": [weather_task(failing_api.url)]})
    conversation, snap = say(agent)
    assert snap["conversationState"] == "ERROR"
    assert snap["actions"] == [f"task_failed_{TASK}"]
    assert snap["taskErrors"] == []
    assert entries(conversation) == [
        ("message", "user", "", True),
        ("data", "", TASK, False),
        ("error", "", TASK, False),
        ("action", "", TASK, True),
    ]


def test_keep_all_keeps_the_raw_output_committed_and_still_emits_the_action(make_agent, failing_api):
    agent = make_agent({**policy("keep_all"), "workflow": [weather_task(failing_api.url)]})
    conversation, snap = say(agent)
    assert snap["actions"] == [f"task_failed_{TASK}"]
    assert [e["text"] for e in snap["taskErrors"]] == [expected_text(failing_api)]
    assert entries(conversation) == [
        ("message", "user", "", True),
        ("data", "", TASK, True),
        ("error", "", TASK, True),
        ("action", "", TASK, True),
    ]


def test_the_turn_stops_at_the_failing_task_without_continue_on_failure(make_agent, failing_api):
    agent = make_agent(
        {
            **policy("digest"),
            "workflow": [weather_task(failing_api.url), {"id": "llm", "type": "llm", "provider": "demo"}],
        }
    )
    conversation, snap = say(agent)
    assert snap["conversationState"] == "ERROR" and snap["output"] == []
    runs = list(
        TaskRun.objects.filter(conversation=conversation).values_list("task_id", "status", "error_type")
    )
    assert runs == [(TASK, "failed", "provider")]


def test_output_set_keyed_on_task_failed_answers_in_the_same_turn(make_agent, failing_api):
    agent = make_agent(
        {
            **policy("digest", cont=True),
            "workflow": [weather_task(failing_api.url)],
            "outputSet": [
                {
                    "action": f"task_failed_{TASK}",
                    "outputs": [
                        {
                            "valueAlternatives": [
                                {"type": "text", "text": "Sorry — I can't check the weather right now."}
                            ]
                        }
                    ],
                }
            ],
        }
    )
    conversation, snap = say(agent)
    assert snap["conversationState"] == "READY"
    assert snap["output"] == [{"type": "text", "text": "Sorry — I can't check the weather right now."}]
    assert [e["text"] for e in snap["taskErrors"]] == [expected_text(failing_api)]
    assert ("message", "assistant", "", True) in entries(conversation)


def test_an_llm_after_a_failed_http_call_sees_the_digest_in_the_same_turn(make_agent, stub):
    stub.set("/forecast", status=503, json_body={"message": "Service Unavailable: upstream down"})
    stub.set(
        "/v1/chat/completions", json_body={"choices": [{"message": {"content": "Weather is down, sorry."}}]}
    )
    agent = make_agent(
        {
            **policy("digest", cont=True),
            "workflow": [
                weather_task(stub.url),
                {"id": "llm", "type": "llm", "provider": "openai", "model": "m", "baseUrl": stub.url + "/v1"},
            ],
        }
    )
    stub.requests.clear()
    conversation, snap = say(agent)
    assert snap["conversationState"] == "READY"
    assert snap["output"] == [{"type": "text", "text": "Weather is down, sorry."}]
    sent = stub.requests[-1].json
    system = sent["messages"][0]["content"]
    assert sent["messages"][0]["role"] == "system"
    assert expected_text(stub) in system
    assert sent["messages"][-1] == {"role": "user", "content": "What's the weather in Oslo?"}


def test_continue_without_a_later_answer_ends_in_error_but_runs_the_rest(make_agent, failing_api):
    agent = make_agent(
        {
            **policy("exclude_all", cont=True),
            "workflow": [
                weather_task(failing_api.url),
                {
                    "id": "rules",
                    "type": "behavior_rules",
                    "behaviorRules": [
                        {
                            "name": "r",
                            "actions": ["saw_failure"],
                            "conditions": [
                                {"type": "actionmatcher", "configs": {"actions": f"task_failed_{TASK}"}}
                            ],
                        }
                    ],
                },
            ],
        }
    )
    conversation, snap = say(agent)
    assert snap["conversationState"] == "ERROR"
    assert snap["actions"] == [f"task_failed_{TASK}", "saw_failure"]
    assert snap["taskErrors"] == []


def test_timeouts_and_refused_connections_read_as_spec_says(make_agent, stub):
    stub.set("/slow", json_body={"ok": True}, delay=1.0)
    slow = {
        "id": "weather",
        "type": "http_call",
        "request": {"method": "GET", "url": stub.url + "/slow", "timeoutMs": 200},
    }
    _, snap = say(make_agent({"workflow": [slow]}, name="slow"))
    assert snap["taskErrors"][0]["text"] == (
        f"Task 'weather' failed: API call to 127.0.0.1:{stub.port} failed: timed out after 200 ms"
    )
    url = refused_url()
    refused = {"id": "weather", "type": "http_call", "request": {"method": "GET", "url": url + "/x"}}
    conversation, snap = say(make_agent({"workflow": [refused]}, name="refused"))
    host = url.split("//", 1)[1]
    assert (
        snap["taskErrors"][0]["text"]
        == f"Task 'weather' failed: API call to {host} failed: connection refused"
    )
    assert TaskRun.objects.get(conversation=conversation).error_type == "transport"


def test_http_503_without_a_message_is_just_the_status(make_agent, stub):
    stub.set("/plain503", status=503, text="<html><body>down</body></html>", content_type="text/html")
    task = {"id": "weather", "type": "http_call", "request": {"url": stub.url + "/plain503"}}
    _, snap = say(make_agent({"workflow": [task]}))
    assert (
        snap["taskErrors"][0]["text"]
        == f"Task 'weather' failed: API call to 127.0.0.1:{stub.port} failed: HTTP 503"
    )


def test_a_successful_call_stores_its_json_as_data_and_templates_the_input(make_agent, stub):
    stub.set("/forecast", json_body={"temp": 21, "sky": "clear"})
    agent = make_agent({"workflow": [weather_task(stub.url)]})
    stub.requests.clear()
    conversation, snap = say(agent, text="Oslo & Bergen")
    assert snap["conversationState"] == "READY" and snap["taskErrors"] == []
    assert stub.requests[-1].path == "/forecast?q=Oslo%20%26%20Bergen"
    data = Entry.objects.get(memory=conversation.memory, kind="data")
    assert data.key == "weather" and data.value == {"temp": 21, "sky": "clear"} and data.committed


def test_the_input_of_a_failed_turn_stays_committed_and_the_next_say_works(make_agent, failing_api):
    agent = make_agent({**policy("digest"), "workflow": [weather_task(failing_api.url)]})
    conversation, _ = say(agent)
    failing_api.set("/forecast", json_body={"temp": 3})
    snap = services.turn_say(conversation=conversation, text="again")
    assert snap["turn"] == 2 and snap["conversationState"] == "READY"
    users = Entry.objects.filter(memory=conversation.memory, kind="message", role="user").order_by("seq")
    assert [(u.content, u.committed) for u in users] == [
        ("What's the weather in Oslo?", True),
        ("again", True),
    ]


def test_templates_read_data_stored_by_earlier_tasks(make_agent, stub):
    stub.set("/geo", json_body={"city": {"name": "Oslo", "id": 7}})
    stub.set("/forecast", json_body={"temp": 3})
    agent = make_agent(
        {
            "workflow": [
                {"id": "geo", "type": "http_call", "storeAs": "place", "request": {"url": stub.url + "/geo"}},
                {
                    "id": "weather",
                    "type": "http_call",
                    "request": {
                        "method": "POST",
                        "url": stub.url + "/forecast?city={{ data.place.city.name }}",
                        "headers": {"X-City-Id": "{{ data.place.city.id }}"},
                        "body": {"q": "{{ input }}"},
                    },
                },
            ]
        }
    )
    stub.requests.clear()
    say(agent, text="rain?")
    call = stub.requests[-1]
    assert (
        call.path == "/forecast?city=Oslo"
        and call.headers["X-City-Id"] == "7"
        and call.json == {"q": "rain?"}
    )
