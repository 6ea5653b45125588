"""The llm task against real local OpenAI- and Anthropic-compatible stub servers, streamed and not."""

from __future__ import annotations

import json

import pytest

from chat import runner, services
from chat.models import TaskRun
from memories.models import Entry
from projects import services as project_services
from tests.chat.conftest import policy
from tests.chat.stubs import refused_url

pytestmark = pytest.mark.django_db

LLM = "eddi://ai.labs.llm"
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages"}


def llm_task(stub_url: str, provider: str = "openai", **extra) -> dict:
    base = stub_url + ("/v1" if provider == "openai" else "")
    return {
        "id": LLM,
        "type": "llm",
        "provider": provider,
        "model": "x",
        "baseUrl": base,
        "instructions": "Be brief.",
        **extra,
    }


def run_streamed(conversation, text: str = "hello"):
    events: list[dict] = []
    handle = runner.turn_begin(conversation=conversation, text=text)
    snap = runner.turn_execute(handle=handle, stream=True, listener=events.append)
    return snap, events


def error_body(provider: str, message: str, kind: str = "invalid_request_error") -> dict:
    if provider == "openai":
        return {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return {"type": "error", "error": {"type": kind, "message": message}}


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_missing_model_reads_exactly_as_the_seed_says(make_agent, stub, provider):
    stub.set(
        PATHS[provider], status=404, json_body=error_body(provider, "model 'x' not found", "not_found_error")
    )
    agent = make_agent({**policy("digest"), "workflow": [llm_task(stub.url, provider)]})
    conversation, _ = services.conversation_create(agent=agent)
    snap = services.turn_say(conversation=conversation, text="hi")
    assert snap["conversationState"] == "ERROR"
    assert snap["taskErrors"] == [
        {
            "type": "errorDigest",
            "taskId": "ai.labs.llm",
            "taskType": "llm",
            "text": "Task 'eddi://ai.labs.llm' failed: Chat model execution failed: model 'x' not found",
        }
    ]
    assert snap["actions"] == ["task_failed_ai.labs.llm"]
    assert TaskRun.objects.get(conversation=conversation).error_type == "provider"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_rejected_parameter_on_a_streamed_say_reads_exactly_as_the_seed_says(make_agent, stub, provider):
    stub.set(
        PATHS[provider],
        status=400,
        json_body=error_body(provider, "`temperature` is deprecated for this model."),
    )
    agent = make_agent({"workflow": [llm_task(stub.url, provider, params={"temperature": 0.2})]})
    conversation, _ = services.conversation_create(agent=agent)
    snap, events = run_streamed(conversation)
    text = (
        "Task 'eddi://ai.labs.llm' failed: Streaming chat failed: `temperature` is deprecated for this model."
    )
    assert [e["text"] for e in snap["taskErrors"]] == [text]
    failed = next(e for e in events if e["event"] == "task_failed")
    assert failed["data"] == {
        "taskId": "ai.labs.llm",
        "taskType": "llm",
        "durationMs": failed["data"]["durationMs"],
        "errorType": "provider",
        "error": text,
    }
    assert stub.requests[-1].json["stream"] is True and stub.requests[-1].json["temperature"] == 0.2


@pytest.mark.parametrize("stream", [False, True])
def test_an_html_traceback_with_a_secret_never_reaches_the_digest_or_the_raw_error(make_agent, stub, stream):
    secret = "sk-live0123456789abcdefXYZ"
    html = (
        "<html><body><h1>Internal Server Error</h1><pre>Traceback (most recent call last):\n"
        '  File "/srv/app/handler.py", line 42, in complete\n    client.call(api_key)\n'
        f"openai.error.AuthenticationError: bad key {secret} at https://internal.example/v1</pre></body></html>"
    )
    stub.set(PATHS["openai"], status=500, text=html, content_type="text/html")
    agent = make_agent({**policy("keep_all"), "workflow": [llm_task(stub.url)]})
    conversation, _ = services.conversation_create(agent=agent)
    snap = (
        run_streamed(conversation)[0] if stream else services.turn_say(conversation=conversation, text="hi")
    )
    op = "Streaming chat failed" if stream else "Chat model execution failed"
    assert snap["taskErrors"][0]["text"] == f"Task 'eddi://ai.labs.llm' failed: {op}: HTTP 500"
    run = TaskRun.objects.get(conversation=conversation)
    stored = Entry.objects.get(memory=conversation.memory, kind="error").content
    for text in (run.raw_error, stored, run.error_text):
        assert secret not in text
    assert "Traceback" in run.raw_error  # staff see the raw failure, secret-redacted


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_timeouts_and_refused_connections(make_agent, stub, provider):
    stub.set(PATHS[provider], json_body={}, delay=1.0)
    agent = make_agent({"workflow": [llm_task(stub.url, provider, timeoutMs=200)]}, name="slow")
    conversation, _ = services.conversation_create(agent=agent)
    snap = services.turn_say(conversation=conversation, text="hi")
    assert (
        snap["taskErrors"][0]["text"]
        == "Task 'eddi://ai.labs.llm' failed: Chat model execution failed: timed out after 200 ms"
    )
    assert TaskRun.objects.get(conversation=conversation).error_type == "timeout"
    agent = make_agent({"workflow": [llm_task(refused_url(), provider)]}, name="refused")
    conversation, _ = services.conversation_create(agent=agent)
    snap, _events = run_streamed(conversation)
    assert (
        snap["taskErrors"][0]["text"]
        == "Task 'eddi://ai.labs.llm' failed: Streaming chat failed: connection refused"
    )
    assert TaskRun.objects.get(conversation=conversation).error_type == "transport"


def test_rate_limits_are_typed_rate_limit(make_agent, stub):
    stub.set(PATHS["openai"], status=429, json_body=error_body("openai", "Rate limit reached", "rate_limit"))
    agent = make_agent({"workflow": [llm_task(stub.url)]})
    conversation, _ = services.conversation_create(agent=agent)
    snap = services.turn_say(conversation=conversation, text="hi")
    assert snap["taskErrors"][0]["text"].endswith("Chat model execution failed: Rate limit reached")
    assert TaskRun.objects.get(conversation=conversation).error_type == "rate_limit"


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_streamed_turn_sends_events_in_order_and_stores_the_reply(make_agent, stub, provider):
    pieces = ["Hel", "lo", " there", "!"]
    (stub.openai_stream if provider == "openai" else stub.anthropic_stream)(PATHS[provider], pieces)
    agent = make_agent({"workflow": [llm_task(stub.url, provider)]})
    conversation, _ = services.conversation_create(agent=agent)
    snap, events = run_streamed(conversation)
    assert [e["event"] for e in events] == [
        "turn_start",
        "task_start",
        "token",
        "token",
        "token",
        "token",
        "task_end",
        "output",
        "done",
    ]
    assert [e["id"] for e in events] == list(range(1, 10))
    assert "".join(e["data"]["text"] for e in events if e["event"] == "token") == "Hello there!"
    assert (
        snap["output"] == [{"type": "text", "text": "Hello there!"}] and snap["conversationState"] == "READY"
    )
    assert events[-1]["data"]["snapshot"] == snap
    reply = Entry.objects.get(memory=conversation.memory, kind="message", role="assistant")
    assert reply.content == "Hello there!" and reply.committed


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_non_streamed_replies(make_agent, stub, provider):
    if provider == "openai":
        stub.set(
            PATHS[provider], json_body={"choices": [{"message": {"role": "assistant", "content": "Hi!"}}]}
        )
    else:
        stub.set(PATHS[provider], json_body={"type": "message", "content": [{"type": "text", "text": "Hi!"}]})
    agent = make_agent({"workflow": [llm_task(stub.url, provider)]})
    conversation, _ = services.conversation_create(agent=agent)
    assert services.turn_say(conversation=conversation, text="hi")["output"] == [
        {"type": "text", "text": "Hi!"}
    ]
    sent = stub.requests[-1]
    if provider == "anthropic":
        assert sent.json["system"].startswith("Be brief.") and sent.json["messages"] == [
            {"role": "user", "content": "hi"}
        ]
        assert sent.headers.get("anthropic-version")


@pytest.mark.parametrize(
    "mode,committed", [("off", True), ("keep_all", True), ("digest", False), ("exclude_all", False)]
)
def test_a_stream_failing_midway_keeps_or_rolls_back_its_partial_output(make_agent, stub, mode, committed):
    stub.openai_stream(
        PATHS["openai"],
        ["Partial ", "answer"],
        tail=[f"data: {json.dumps({'error': {'message': 'upstream overloaded'}})}\n\n"],
    )
    agent = make_agent({**policy(mode), "workflow": [llm_task(stub.url)]})
    conversation, _ = services.conversation_create(agent=agent)
    snap, events = run_streamed(conversation)
    assert snap["conversationState"] == "ERROR" and snap["output"] == []
    partial = Entry.objects.get(memory=conversation.memory, kind="message", role="assistant")
    assert partial.content == "Partial answer" and partial.committed is committed
    failed = next(e for e in events if e["event"] == "task_failed")
    expected = "Task 'eddi://ai.labs.llm' failed: Streaming chat failed: upstream overloaded"
    assert failed["data"]["error"] == (None if mode == "exclude_all" else expected)


def test_api_keys_come_from_the_secret_store_or_an_allowed_env_var(
    make_agent, stub, cast, monkeypatch, settings
):
    stub.set(PATHS["openai"], json_body={"choices": [{"message": {"content": "ok"}}]})
    project_services.secret_set(project=cast.project_a, name="openai", value="sk-fromthestore-123456")
    agent = make_agent({"workflow": [llm_task(stub.url, apiKeySecret="openai")]})
    conversation, _ = services.conversation_create(agent=agent)
    services.turn_say(conversation=conversation, text="hi")
    assert stub.requests[-1].headers["Authorization"] == "Bearer sk-fromthestore-123456"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-fromtheenv-654321")
    settings.THREADLESS_PROVIDER_ENV_ALLOW = ["OPENAI_API_KEY@127.0.0.1"]  # the server's key, to this host
    agent = make_agent({"workflow": [llm_task(stub.url, apiKeyEnv="OPENAI_API_KEY")]}, name="env")
    conversation, _ = services.conversation_create(agent=agent)
    services.turn_say(conversation=conversation, text="hi")
    assert stub.requests[-1].headers["Authorization"] == "Bearer sk-fromtheenv-654321"


def test_the_egress_policy_refuses_loopback_unless_allowed(make_agent, stub, settings):
    agent = make_agent({"workflow": [llm_task(stub.url)]})
    settings.THREADLESS_EGRESS_ALLOW = []  # taken off the list after the agent was saved
    conversation, _ = services.conversation_create(agent=agent)
    stub.requests.clear()
    snap = services.turn_say(conversation=conversation, text="hi")
    assert snap["taskErrors"][0]["text"].startswith(
        "Task 'eddi://ai.labs.llm' failed: Chat model execution failed: egress to 127.0.0.1 is not allowed"
    )
    assert stub.requests == []


def test_the_demo_model_answers_from_facts_and_never_quotes_failures(make_agent, cast):
    from memories.services import fact_create

    agent = make_agent(
        {
            **policy("digest", cont=True),
            "workflow": [
                {"id": "weather", "type": "http_call", "request": {"url": refused_url() + "/x"}},
                {"id": "llm", "type": "llm", "provider": "demo"},
            ],
        }
    )
    conversation, _ = services.conversation_create(agent=agent)
    fact_create(memory=conversation.memory, text="The user's dog is called Biscuit.")
    snap = services.turn_say(conversation=conversation, text="What is my dog called?")
    reply = snap["output"][0]["text"]
    assert reply.startswith("[demo model] You asked: \u201cWhat is my dog called?\u201d")
    assert "From memory: The user's dog is called Biscuit." in reply
    assert "refused" not in reply and "weather" not in reply.lower()
    assert snap["conversationState"] == "READY"


def test_the_demo_model_answers_from_what_recall_found_and_says_when_it_remembers_nothing(make_agent):
    from common.messages import validate_messages
    from memories.models import Outbox
    from memories.services import messages_import, outbox_process

    agent = make_agent({"workflow": [{"id": "llm", "type": "llm", "provider": "demo"}]})
    conversation, _ = services.conversation_create(agent=agent)
    reply = services.turn_say(conversation=conversation, text="Hi")["output"][0]["text"]
    assert "I remember nothing about you yet" in reply
    messages_import(
        memory=conversation.memory,
        thread="trip",
        raw_messages=[{"role": "user", "content": "I went hiking in Sintra last weekend."}],
        validate=validate_messages,
    )
    for row in Outbox.objects.filter(memory=conversation.memory, processed_at=None):
        outbox_process(outbox_id=row.id)
    conversation.memory.refresh_from_db()  # as the next request reads it
    reply = services.turn_say(conversation=conversation, text="Where did I go hiking?")["output"][0]["text"]
    assert "From memory: you said \u201cI went hiking in Sintra last weekend.\u201d" in reply
