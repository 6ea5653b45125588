"""ThreadlessSession under the real openai-agents Runner, with the SDK's own ScriptedModel."""

from __future__ import annotations

import uuid

import pytest
from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.memory import Session
from agents.testing import ScriptedModel, assistant_message, function_call
from threadless import AsyncThreadless
from threadless.integrations.openai_agents import ThreadlessSession

pytestmark = pytest.mark.live
set_tracing_disabled(True)  # the SDK's tracer would export to api.openai.com: nothing leaves loopback


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"21 °C and sunny in {city}"


@pytest.fixture
async def client(live_server_proc, errors):
    async with AsyncThreadless(
        api_key=live_server_proc.key, base_url=live_server_proc.url, on_error=errors
    ) as c:
        yield c


def weather_agent(model, session=None):
    instructions = session.instructions("Be brief.") if session else "Be brief."
    return Agent(name="Helper", instructions=instructions, model=model, tools=[weather])


async def test_the_session_satisfies_the_agents_session_protocol(client):
    session = ThreadlessSession((await client.create()).id, client=client)
    assert isinstance(session, Session)
    assert await session.get_items() == []


async def test_a_run_with_a_tool_call_round_trips_every_item_exactly(client, errors):
    session = ThreadlessSession(external_id="agents-" + uuid.uuid4().hex, client=client)
    model = ScriptedModel(
        [
            [function_call("weather", {"city": "Paris"}, call_id="call_1")],
            [assistant_message("It is 21 °C in Paris.")],
        ]
    )
    result = await Runner.run(weather_agent(model, session), "Weather in Paris?", session=session)
    assert result.final_output == "It is 21 °C in Paris."
    await client.flush(10)
    items = await session.get_items()
    assert items == result.to_input_list()
    assert [i.get("type") for i in items] == [None, "function_call", "function_call_output", "message"]
    assert items[1]["call_id"] == items[2]["call_id"] == "call_1"
    assert items[2]["output"] == "21 °C and sunny in Paris"
    assert await session.get_items(limit=2) == items[-2:]
    # The service sees chat messages: the call as tool_calls, its output as a tool message.
    entries = list(await client.entries.list(session.memory_id))
    assert [(e.role, e.turn) for e in entries] == [
        ("user", 1),
        ("assistant", 1),
        ("tool", 1),
        ("assistant", 1),
    ]
    assert entries[2].content[0]["text"] == "21 °C and sunny in Paris"
    assert errors.calls == []


async def test_the_next_run_sends_the_model_the_previous_turn(client):
    session = ThreadlessSession((await client.create()).id, client=client)
    model = ScriptedModel([[assistant_message("Hello Ada!")], [assistant_message("Your name is Ada.")]])
    agent = weather_agent(model, session)
    await Runner.run(agent, "My name is Ada.", session=session)
    await client.flush(10)
    await Runner.run(agent, "What is my name?", session=session)
    second = model.calls[1].input
    assert [i.get("role") for i in second] == ["user", "assistant", "user"]
    assert second[0]["content"] == "My name is Ada."
    assert second[-1]["content"] == "What is my name?"


async def test_facts_reach_the_agent_instructions_not_the_items(client):
    m = await client.create()
    await client.facts.create(m.id, "The user's dog is called Biscuit.")
    session = ThreadlessSession(m.id, client=client)
    model = ScriptedModel([[assistant_message("Biscuit.")]])
    await Runner.run(weather_agent(model, session), "What is my dog called?", session=session)
    call = model.calls[0]
    assert call.system_instructions.startswith("Be brief.\n\n")
    assert "Biscuit" in call.system_instructions
    assert all("Biscuit" not in str(i) for i in call.input)


async def test_a_session_is_a_thread_in_its_users_memory(client, errors):
    user_id = "agents-user-" + uuid.uuid4().hex
    first = ThreadlessSession(external_id=user_id, thread="session-1", client=client)
    second = ThreadlessSession(external_id=user_id, thread="session-2", client=client)
    assert (first.session_id, second.session_id) == ("session-1", "session-2")
    model = ScriptedModel([[assistant_message("Hello Ada!")], [assistant_message("Lyon it is.")]])
    await Runner.run(weather_agent(model, first), "My name is Ada.", session=first)
    await client.flush(10)
    await Runner.run(weather_agent(model, second), "Plan a trip to Lyon.", session=second)
    await client.flush(10)
    assert [i.get("content") for i in model.calls[1].input] == ["Plan a trip to Lyon."]
    assert first.memory_id == second.memory_id  # one memory for the user
    assert [t.id for t in await client.threads.list(external_id=user_id)] == ["session-2", "session-1"]
    await second.clear_session()
    assert await second.get_items() == []
    assert [i.get("content") for i in await first.get_items()][0] == "My name is Ada."
    assert errors.calls == []


async def test_pop_item_hides_the_newest_item_and_clear_session_starts_afresh(client):
    external = "agents-" + uuid.uuid4().hex
    session = ThreadlessSession(external_id=external, client=client)
    await session.add_items([{"role": "user", "content": "one"}, {"role": "assistant", "content": "two"}])
    await client.flush(10)
    assert await session.pop_item() == {"role": "assistant", "content": "two"}
    assert await session.get_items() == [{"role": "user", "content": "one"}]
    old = session.memory_id
    await session.clear_session()
    assert await session.get_items() == []
    assert await session.pop_item() is None
    assert session.memory_id != old and session.session_id == external


async def test_with_the_service_down_the_run_still_answers_from_the_local_tail(stoppable_server, errors):
    async with AsyncThreadless(
        api_key=stoppable_server.key, base_url=stoppable_server.url, timeout=2, on_error=errors
    ) as c:
        session = ThreadlessSession((await c.create()).id, client=c, on_error=errors)
        model = ScriptedModel([[assistant_message("Hello Ada!")], [assistant_message("Ada.")]])
        agent = weather_agent(model, session)
        await Runner.run(agent, "My name is Ada.", session=session)
        await c.flush(10)
        with stoppable_server.down():
            result = await Runner.run(agent, "What is my name?", session=session)
        assert result.final_output == "Ada."
        assert [i.get("content") for i in model.calls[1].input][0] == "My name is Ada."
        assert model.calls[1].input[-1]["content"] == "What is my name?"
        assert errors.contexts and {c["operation"] for c in errors.contexts} == {"decorate"}
