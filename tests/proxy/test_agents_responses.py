"""The OpenAI Agents SDK, unchanged, through the proxy: its default Responses API path (Runner.run
and Runner.run_streamed, a tool and a handoff) and OpenAIConversationsSession kept in a memory."""

from __future__ import annotations

import uuid

import openai
import pytest
from agents import Agent, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.memory import OpenAIConversationsSession
from agents.models.openai_provider import OpenAIProvider

from tests.proxy.conftest import entries, wait_for

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
set_tracing_disabled(True)  # the SDK's tracer would export to api.openai.com: nothing leaves loopback


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"21 °C and sunny in {city}"


def _openai(live, upstream, **headers) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=live.url + "/v1/openai",
        api_key=live.key,
        max_retries=0,
        timeout=30,
        default_headers={
            "X-Upstream-Base-Url": upstream.openai_url,
            "X-Upstream-Authorization": "Bearer sk-stub-openai",
            **headers,
        },
    )


def _agents():
    weather = Agent(
        name="Weather agent",
        instructions="Answer weather questions.",
        tools=[get_weather],
        model="gpt-5-mini",
    )
    triage = Agent(
        name="Triage", instructions="Hand weather questions over.", handoffs=[weather], model="gpt-5-mini"
    )
    return triage, weather


def _script(upstream) -> None:
    upstream.push(tool=("transfer_to_weather_agent", {}))
    upstream.push(tool=("get_weather", {"city": "Paris"}))
    # then the stub's default after a tool output: "The tool said: …"


def _check_memory(live, upstream, memory_id: str) -> None:
    assert all(r.path == "/v1/responses" for r in upstream.requests)  # the default API: Responses
    stored = [e for e in entries(live, memory_id) if e["kind"] == "message"]
    assert [(e["role"], e["turn"]) for e in stored] == [
        ("user", 1),
        ("assistant", 1),
        ("tool", 1),
        ("assistant", 1),
        ("tool", 1),
        ("assistant", 1),
    ]
    assert stored[1]["tool_calls"][0]["function"]["name"] == "transfer_to_weather_agent"
    assert stored[3]["tool_calls"][0]["id"] == stored[4]["tool_call_id"]
    assert stored[4]["content"] == "21 °C and sunny in Paris"
    last = upstream.requests[-1].body
    assert last["instructions"].startswith("Answer weather questions.")  # the handed-to agent's own
    assert [i.get("type") for i in last["input"]] == [
        "message",
        "function_call",
        "function_call_output",
        "function_call",
        "function_call_output",
    ]


async def test_runner_run_with_a_tool_and_a_handoff_goes_through_the_proxy_and_is_remembered(live, upstream):
    external = "agents-" + uuid.uuid4().hex[:8]
    client = _openai(live, upstream, **{"X-Threadless-External-Id": external})
    _script(upstream)
    triage, _ = _agents()
    result = await Runner.run(
        triage, "Weather in Paris?", run_config=RunConfig(model_provider=OpenAIProvider(openai_client=client))
    )
    assert result.final_output == "The tool said: 21 °C and sunny in Paris"
    assert result.last_agent.name == "Weather agent"
    with live.client() as http:
        memory_id = http.get("/memories", params={"external_id": external}).json()["data"][0]["id"]
    _check_memory(live, upstream, memory_id)


async def test_runner_run_streamed_streams_the_events_and_is_remembered(live, upstream):
    external = "agents-" + uuid.uuid4().hex[:8]
    client = _openai(live, upstream, **{"X-Threadless-External-Id": external})
    _script(upstream)
    triage, _ = _agents()
    result = Runner.run_streamed(
        triage, "Weather in Paris?", run_config=RunConfig(model_provider=OpenAIProvider(openai_client=client))
    )
    deltas = [
        e.data.delta
        async for e in result.stream_events()
        if e.type == "raw_response_event" and e.data.type == "response.output_text.delta"
    ]
    assert "".join(deltas) == result.final_output == "The tool said: 21 °C and sunny in Paris"
    with live.client() as http:
        memory_id = http.get("/memories", params={"external_id": external}).json()["data"][0]["id"]
    _check_memory(live, upstream, memory_id)


async def test_openai_conversations_session_keeps_the_session_in_a_threadless_memory(live, upstream):
    client = _openai(live, upstream)
    session = OpenAIConversationsSession(openai_client=client)
    agent = Agent(name="Helper", instructions="Be brief.", model="gpt-5-mini")
    config = RunConfig(model_provider=OpenAIProvider(openai_client=client))
    upstream.push(text="Hello Ada!")
    await Runner.run(agent, "My name is Ada and I live in Lisbon.", session=session, run_config=config)
    upstream.push(text="You are Ada.")
    second = await Runner.run(agent, "Who am I?", session=session, run_config=config)
    assert second.final_output == "You are Ada."
    memory_id = session.session_id
    assert memory_id.startswith("mem_")  # the conversation is a Threadless memory
    said = [(e["role"], e["content"]) for e in entries(live, memory_id) if e["kind"] == "message"]
    assert said == [
        ("user", "My name is Ada and I live in Lisbon."),
        ("assistant", "Hello Ada!"),
        ("user", "Who am I?"),
        ("assistant", "You are Ada."),
    ]
    sent = upstream.requests[-1].body["input"]
    assert [i["content"] if isinstance(i["content"], str) else i["content"][0]["text"] for i in sent] == [
        "My name is Ada and I live in Lisbon.",
        "Hello Ada!",
        "Who am I?",
    ]
    assert all("id" not in i for i in sent)  # the session's item ids are ours, not the upstream's

    def facts():
        with live.client() as http:
            return [f["text"] for f in http.get(f"/memories/{memory_id}/facts").json()["data"]]

    found = wait_for(facts, timeout=240)
    assert any("Ada" in fact for fact in found), found
    assert (await session.pop_item())["content"][0]["text"] == "You are Ada."
    assert len(await session.get_items()) == 3
    await session.clear_session()
    with live.client() as http:
        assert http.get(f"/memories/{memory_id}").status_code == 404
