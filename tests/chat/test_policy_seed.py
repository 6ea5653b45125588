"""Seed 000 (memory policy) sentence by sentence, as a new user tries it."""

from __future__ import annotations

import json

import pytest

from chat import runner, services
from chat.models import Agent
from memories import services as memory_services
from memories.context import FAILURES_HEADER, PARAMETERS, context_build
from memories.models import Entry
from tests.chat.conftest import policy
from tests.chat.stubs import refused_url

pytestmark = pytest.mark.django_db

# Pasted unchanged from seed 000, "Behavior Rule Integration".
SEED_BEHAVIOR_RULES = """
{
  "behaviorRules": [
    {
      "name": "Handle Weather Failure",
      "actions": ["fallback_response"],
      "conditions": [
        {
          "type": "actionmatcher",
          "configs": {
            "actions": "task_failed_ai.labs.httpcalls"
          }
        }
      ]
    }
  ]
}
"""
FALLBACK = "The weather service is down right now."
TASK = "ai.labs.httpcalls"


def weather_task(url: str) -> dict:
    return {
        "id": TASK,
        "type": "http_call",
        "storeAs": "weather",
        "request": {"method": "GET", "url": url + "/forecast", "timeoutMs": 3000},
    }


def fallback_output() -> dict:
    return {
        "outputSet": [
            {
                "action": "fallback_response",
                "outputs": [{"valueAlternatives": [{"type": "text", "text": FALLBACK}]}],
            }
        ]
    }


def committed(conversation, **filters) -> list[tuple]:
    return list(
        Entry.objects.filter(memory=conversation.memory, committed=True, **filters)
        .order_by("seq")
        .values_list("kind", "task_id", "content")
    )


def model_view(conversation, text: str = "and now?", budget: int = 60000):
    conversation.memory.refresh_from_db()
    return context_build(
        memory=conversation.memory, new_messages=[{"role": "user", "content": text}], budget_tokens=budget
    )


# --- the seed's behavior rule, pasted as is ---------------------------------------------------


def test_the_seeds_behavior_rule_pasted_unchanged_fires_in_the_turn_after_the_failure(make_agent, stub):
    stub.set("/forecast", status=503, json_body={"message": "upstream down"})
    agent = make_agent(
        {
            **policy("digest"),
            **json.loads(SEED_BEHAVIOR_RULES),
            **fallback_output(),
            "workflow": [weather_task(stub.url)],
        }
    )
    conversation, _ = services.conversation_create(agent=agent)
    first = services.turn_say(conversation=conversation, text="What's the weather?")
    assert first["conversationState"] == "ERROR"
    assert first["actions"] == ["task_failed_ai.labs.httpcalls"]
    # "only visible to the next turn's behavior rules": the next turn routes to the fallback.
    stub.set("/forecast", json_body={"temp": 3})
    second = services.turn_say(conversation=conversation, text="What's the weather?")
    assert second["actions"][0] == "fallback_response"
    assert second["output"] == [{"type": "text", "text": FALLBACK}]
    assert second["conversationState"] == "READY"
    # A turn after one that worked has nothing to react to.
    third = services.turn_say(conversation=conversation, text="What's the weather?")
    assert "fallback_response" not in third["actions"] and third["output"] == []


def test_with_continue_on_failure_the_seeds_rule_answers_even_when_the_call_fails_again(make_agent):
    agent = make_agent(
        {
            **policy("digest", cont=True),
            **json.loads(SEED_BEHAVIOR_RULES),
            **fallback_output(),
            "workflow": [weather_task(refused_url())],
        }
    )
    conversation, _ = services.conversation_create(agent=agent)
    assert services.turn_say(conversation=conversation, text="weather?")["output"] == []
    second = services.turn_say(conversation=conversation, text="weather?")
    assert second["output"] == [{"type": "text", "text": FALLBACK}]
    assert second["conversationState"] == "READY"


def test_without_strict_write_the_seeds_rule_has_no_action_to_react_to(make_agent):
    agent = make_agent(
        {**json.loads(SEED_BEHAVIOR_RULES), **fallback_output(), "workflow": [weather_task(refused_url())]}
    )
    conversation, _ = services.conversation_create(agent=agent)
    assert services.turn_say(conversation=conversation, text="weather?")["actions"] == []
    assert "fallback_response" not in services.turn_say(conversation=conversation, text="weather?")["actions"]


# --- each attempt's entries follow the policy for that attempt -------------------------------


@pytest.mark.parametrize("mode", ["off", "digest", "keep_all"])
def test_a_rerun_that_works_leaves_no_trace_of_the_failed_attempt_in_what_the_model_sees(
    make_agent, stub, mode
):
    stub.set("/forecast", status=503, json_body={"message": "upstream down"})
    agent = make_agent({**policy(mode), "workflow": [weather_task(stub.url)]})
    conversation, _ = services.conversation_create(agent=agent)
    assert services.turn_say(conversation=conversation, text="Oslo?")["conversationState"] == "ERROR"
    assert model_view(conversation).context_text  # the failure is visible before the rerun
    stub.set("/forecast", json_body={"temp": 3})
    snap = services.turn_rerun(conversation=conversation)
    assert snap["conversationState"] == "READY" and snap["taskErrors"] == [] and snap["actions"] == []
    # The user's input, then the rerun's data once: no digest, error or action of attempt 1.
    assert [(k, t) for k, t, _c in committed(conversation)] == [("message", ""), ("data", TASK)]
    assert committed(conversation, kind="data")[0][2] == '{"temp":3}'
    view = model_view(conversation)
    assert FAILURES_HEADER not in view.context_text and view.digests == []


def test_a_rerun_that_fails_again_shows_only_its_own_digest(make_agent, stub):
    stub.set("/forecast", status=503, json_body={"message": "upstream down"})
    agent = make_agent({**policy("digest"), "workflow": [weather_task(stub.url)]})
    conversation, _ = services.conversation_create(agent=agent)
    services.turn_say(conversation=conversation, text="Oslo?")
    services.turn_rerun(conversation=conversation)
    assert [k for k, _t, _c in committed(conversation)] == ["message", "digest", "action"]
    assert len(model_view(conversation).digests) == 1


def test_a_turn_that_ends_in_error_takes_the_earlier_tasks_reply_out_of_the_models_view(make_agent):
    agent = make_agent(
        {
            **policy("digest"),
            "workflow": [{"id": "llm", "type": "llm", "provider": "demo"}, weather_task(refused_url())],
        }
    )
    conversation, _ = services.conversation_create(agent=agent)
    events: list[dict] = []
    handle = runner.turn_begin(conversation=conversation, text="My dog is called Biscuit.")
    snap = runner.turn_execute(handle=handle, listener=events.append)
    assert snap["conversationState"] == "ERROR" and snap["output"] == []
    reply = Entry.objects.get(memory=conversation.memory, kind="message", role="assistant")
    assert reply.content and reply.committed is False
    assert {"taskId": "llm"} in [e["data"] for e in events if e["event"] == "rollback"]
    view = model_view(conversation)
    assert [m["role"] for m in view.messages] == ["user", "user"]
    conversation.memory.refresh_from_db()
    assert conversation.memory.message_count == 1  # only the input counts


def test_with_continue_on_failure_the_reply_the_caller_got_stays(make_agent):
    agent = make_agent(
        {
            **policy("digest", cont=True),
            "workflow": [{"id": "llm", "type": "llm", "provider": "demo"}, weather_task(refused_url())],
        }
    )
    conversation, _ = services.conversation_create(agent=agent)
    snap = services.turn_say(conversation=conversation, text="hello")
    assert snap["output"]
    assert Entry.objects.get(memory=conversation.memory, kind="message", role="assistant").committed is True


# --- the failures block: newest, capped, counted in the budget --------------------------------


def _flaky_memory(cast, mode: str, turns: int, error: str):
    memory, _ = memory_services.memory_create(project=cast.project_a, policy=policy(mode).get("memoryPolicy"))
    for n in range(1, turns + 1):
        memory_services.memory_decorate(
            memory=memory, messages=[{"role": "user", "content": f"question {n}"}]
        )
        memory_services.report_accept(
            memory=memory,
            messages=[{"role": "assistant", "content": f"answer {n}"}],
            failures=[
                {"task_id": "weather", "error": f"{error} (turn {n})", "output": None, "has_output": False}
            ],
        )
    memory.refresh_from_db()
    return memory


def test_in_a_long_flaky_conversation_the_newest_digest_reaches_the_model(cast):
    memory = _flaky_memory(cast, "digest", 60, "lookup failed")
    ctx = context_build(
        memory=memory, new_messages=[{"role": "user", "content": "again?"}], budget_tokens=60000
    )
    assert "lookup failed (turn 60)" in ctx.context_text
    assert ctx.digests[-1]["turn"] == 60
    assert "(turn 1)" not in ctx.context_text  # the oldest go first, not the newest


def test_raw_error_rows_are_capped_each_and_the_block_counts_in_the_budget(cast):
    trace = "Traceback (most recent call last):\n" + '  File "x.py", line 1, in f\n' * 400 + "boom"
    memory = _flaky_memory(cast, "off", 12, trace)
    budget = 600
    new = [{"role": "user", "content": "again?"}]
    ctx = context_build(memory=memory, new_messages=new, budget_tokens=budget)
    block = ctx.context_text[ctx.context_text.index(FAILURES_HEADER) :]
    lines = block.split("\n")[1:]
    assert lines and all(len(line) <= PARAMETERS.failure_row_chars + 40 for line in lines)
    assert "(turn 12)" in block
    block_tokens = sum((len(line) + 3) // 4 + 1 for line in block.split("\n"))
    assert ctx.history_tokens + ctx.new_tokens + block_tokens <= budget
    # Without failures the same budget holds more history: the block took its share.
    plain, _ = memory_services.memory_create(project=cast.project_a)
    for n in range(1, 13):
        memory_services.memory_decorate(memory=plain, messages=[{"role": "user", "content": f"question {n}"}])
        memory_services.report_accept(
            memory=plain, messages=[{"role": "assistant", "content": f"answer {n}"}], failures=[]
        )
    plain.refresh_from_db()
    assert (
        context_build(memory=plain, new_messages=new, budget_tokens=budget).history_count > ctx.history_count
    )


# --- the most specific reason in the cause chain -----------------------------------------------


def test_a_reported_java_trace_digests_to_its_last_caused_by(cast):
    memory, _ = memory_services.memory_create(project=cast.project_a, policy=policy("digest")["memoryPolicy"])
    memory_services.memory_decorate(memory=memory, messages=[{"role": "user", "content": "weather?"}])
    trace = (
        "java.net.ConnectException: Connection refused\n"
        "\tat ai.labs.eddi.HttpCalls.execute(HttpCalls.java:142)\n"
        "Caused by: java.io.IOException: stream reset\n"
        "\tat java.base/sun.nio.ch.Net.connect(Net.java:579)\n"
        "Caused by: java.net.UnknownHostException: weather.internal\n"
        "\t... 12 more\n"
    )
    answer = memory_services.report_accept(
        memory=memory,
        messages=[],
        failures=[{"task_id": "ai.labs.httpcalls", "error": trace, "output": None, "has_output": False}],
    )
    assert answer["task_errors"][0]["text"] == "Task 'ai.labs.httpcalls' failed: weather.internal"


def test_a_reported_python_chained_traceback_digests_to_its_root_cause(cast):
    memory, _ = memory_services.memory_create(project=cast.project_a, policy=policy("digest")["memoryPolicy"])
    memory_services.memory_decorate(memory=memory, messages=[{"role": "user", "content": "weather?"}])
    trace = (
        'Traceback (most recent call last):\n  File "w.py", line 3, in get\n    sock.connect(addr)\n'
        "ConnectionResetError: peer went away\n\n"
        "The above exception was the direct cause of the following exception:\n\n"
        'Traceback (most recent call last):\n  File "w.py", line 9, in main\n'
        "RuntimeError: weather lookup failed\n"
    )
    answer = memory_services.report_accept(
        memory=memory,
        messages=[],
        failures=[{"task_id": "weather", "error": trace, "output": None, "has_output": False}],
    )
    assert answer["task_errors"][0]["text"] == "Task 'weather' failed: ConnectionResetError: peer went away"


def test_a_tls_failure_names_what_went_wrong_instead_of_the_exception_class(make_agent, stub):
    # https:// to a plain-HTTP server: a real TLS handshake failure on loopback.
    agent = make_agent(
        {
            **policy("digest"),
            "workflow": [
                {
                    "id": TASK,
                    "type": "http_call",
                    "request": {"url": stub.url.replace("http://", "https://") + "/x"},
                }
            ],
        }
    )
    conversation, _ = services.conversation_create(agent=agent)
    text = services.turn_say(conversation=conversation, text="hi")["taskErrors"][0]["text"]
    prefix = f"Task '{TASK}' failed: API call to 127.0.0.1:{stub.port} failed: "
    assert text.startswith(prefix)
    reason = text[len(prefix) :]
    assert "ConnectError" not in reason and "connection failed" not in reason and "_ssl.c" not in reason
    assert reason.startswith("TLS: ") and len(reason) > len("TLS: ")


def test_a_dns_failure_chain_reads_as_the_resolvers_message():
    import socket

    import httpx

    from chat.tasktypes import specific_reason

    try:
        try:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        except socket.gaierror as exc:
            raise httpx.ConnectError(str(exc)) from exc
    except httpx.ConnectError as exc:
        assert specific_reason("connection failed (ConnectError)", exc) == "Name or service not known"
        assert specific_reason("connection refused", exc) == "connection refused"


def test_an_exception_inside_a_task_names_its_innermost_message(make_agent):
    agent = make_agent({**policy("digest"), "workflow": [{"id": "llm", "type": "llm", "provider": "demo"}]})
    # A stored config that drifted past validation: conditions is an object, not a list.
    Agent.objects.filter(pk=agent.pk).update(
        config={
            **agent.config,
            "behaviorRules": [{"name": "broken", "actions": ["x"], "conditions": {"type": "inputmatcher"}}],
        }
    )
    agent.refresh_from_db()
    conversation, _ = services.conversation_create(agent=agent)
    snap = services.turn_say(conversation=conversation, text="hi")
    text = snap["taskErrors"][0]["text"]
    assert text.startswith("Task 'behaviorRules' failed: behavior_rules task failed: ")
    assert "internal error" not in text and "has no attribute" in text


# --- a streamed failure is rolled back on the page too -----------------------------------------


def test_a_stream_failing_midway_sends_rollback_after_its_tokens(make_agent, stub):
    stub.openai_stream(
        "/v1/chat/completions",
        ["Partial ", "answer"],
        tail=[f"data: {json.dumps({'error': {'message': 'upstream overloaded'}})}\n\n"],
    )
    agent = make_agent(
        {
            **policy("digest"),
            "workflow": [
                {
                    "id": "eddi://ai.labs.llm",
                    "type": "llm",
                    "provider": "openai",
                    "model": "x",
                    "baseUrl": stub.url + "/v1",
                }
            ],
        }
    )
    conversation, _ = services.conversation_create(agent=agent)
    events: list[dict] = []
    handle = runner.turn_begin(conversation=conversation, text="hello")
    runner.turn_execute(handle=handle, stream=True, listener=events.append)
    names = [e["event"] for e in events]
    assert "token" in names and "rollback" in names
    assert names.index("rollback") > max(i for i, n in enumerate(names) if n == "token")
    assert names.index("rollback") < names.index("done")
    assert next(e for e in events if e["event"] == "rollback")["data"] == {"taskId": "ai.labs.llm"}
