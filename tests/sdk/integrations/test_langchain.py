"""ThreadlessChatMessageHistory against langchain-core's real classes and a live server."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables import ConfigurableFieldSpec
from langchain_core.runnables.history import RunnableWithMessageHistory
from threadless import AsyncThreadless, Threadless
from threadless.integrations.langchain import ThreadlessChatMessageHistory

pytestmark = pytest.mark.live


class EchoModel(BaseChatModel):
    """A chat model that records every prompt it gets and answers with a numbered reply."""

    prompts: list = []

    @property
    def _llm_type(self) -> str:
        return "echo"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        self.prompts.append(list(messages))
        reply = AIMessage(content=f"reply {len(self.prompts)} to {messages[-1].content}")
        return ChatResult(generations=[ChatGeneration(message=reply)])


@pytest.fixture
def memory(live_server_proc, errors):
    with Threadless(
        api_key=live_server_proc.key, base_url=live_server_proc.url, timeout=15, on_error=errors
    ) as c:
        yield c


def test_the_history_is_a_langchain_chat_message_history(memory):
    history = ThreadlessChatMessageHistory(memory.create().id, client=memory)
    assert isinstance(history, BaseChatMessageHistory)
    assert history.messages == []


def test_runnable_with_message_history_sees_the_previous_turn(memory, errors):
    model = EchoModel(prompts=[])
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Be kind."), MessagesPlaceholder("history"), ("human", "{question}")]
    )
    external = "lc-" + uuid.uuid4().hex
    chain = RunnableWithMessageHistory(
        prompt | model,
        lambda session_id: ThreadlessChatMessageHistory(external_id=session_id, client=memory),
        input_messages_key="question",
        history_messages_key="history",
    )
    config = {"configurable": {"session_id": external}}
    first = chain.invoke({"question": "I have a beagle called Biscuit."}, config=config)
    assert first.content == "reply 1 to I have a beagle called Biscuit."
    chain.invoke({"question": "What is my dog called?"}, config=config)
    seen = model.prompts[1]
    assert [type(m).__name__ for m in seen] == ["SystemMessage", "HumanMessage", "AIMessage", "HumanMessage"]
    assert [m.content for m in seen[1:]] == [
        "I have a beagle called Biscuit.",
        first.content,
        "What is my dog called?",
    ]
    memory.flush(10)
    stored = memory.list(external_id=external).data
    assert len(stored) == 1  # get-or-create: one memory for the session id
    entries = memory.entries.list(stored[0].id)
    assert [(e.role, e.turn) for e in entries] == [
        ("user", 1),
        ("assistant", 1),
        ("user", 2),
        ("assistant", 2),
    ]
    assert errors.calls == []


def test_a_session_is_a_thread_in_its_users_memory(memory, errors):
    model = EchoModel(prompts=[])
    chain = RunnableWithMessageHistory(
        model,
        lambda user_id, session_id: ThreadlessChatMessageHistory(
            external_id=user_id, thread=session_id, client=memory
        ),
        history_factory_config=[
            ConfigurableFieldSpec(id="user_id", annotation=str, is_shared=True),
            ConfigurableFieldSpec(id="session_id", annotation=str, is_shared=True),
        ],
    )
    user_id = "lc-user-" + uuid.uuid4().hex

    def ask(session_id, text):
        config = {"configurable": {"user_id": user_id, "session_id": session_id}}
        chain.invoke([HumanMessage(content=text)], config=config)
        memory.flush(10)

    ask("chat-1", "My dog is Biscuit.")
    ask("chat-2", "Plan a trip to Lyon.")
    ask("chat-1", "What is my dog called?")
    assert [m.content for m in model.prompts[1]] == ["Plan a trip to Lyon."]  # chat-1 not in chat-2
    assert [m.content for m in model.prompts[2]] == [
        "My dog is Biscuit.",
        "reply 1 to My dog is Biscuit.",
        "What is my dog called?",
    ]
    [stored] = memory.list(external_id=user_id).data  # one memory for the user
    assert {t.id for t in memory.threads.list(stored.id)} == {"chat-1", "chat-2"}
    ThreadlessChatMessageHistory(external_id=user_id, thread="chat-2", client=memory).clear()
    assert [t.id for t in memory.threads.list(stored.id)] == ["chat-1"]  # the user's other chat stays
    assert memory.get(stored.id).id == stored.id
    assert errors.calls == []


def test_tool_calls_and_tool_results_round_trip(memory):
    history = ThreadlessChatMessageHistory(memory.create().id, client=memory)
    sent = [
        HumanMessage(content="What is the weather in Paris?"),
        AIMessage(
            content="",
            tool_calls=[
                {"name": "weather", "args": {"city": "Paris", "days": 2}, "id": "call_1", "type": "tool_call"}
            ],
        ),
        ToolMessage(content='{"temp": 21}', tool_call_id="call_1", name="weather"),
        AIMessage(content="It is 21 °C in Paris."),
    ]
    history.add_messages(sent)
    memory.flush(10)
    back = history.messages
    assert [type(m) for m in back] == [HumanMessage, AIMessage, ToolMessage, AIMessage]
    assert back[1].tool_calls == [
        {"name": "weather", "args": {"city": "Paris", "days": 2}, "id": "call_1", "type": "tool_call"}
    ]
    assert (back[2].content, back[2].tool_call_id, back[2].name) == ('{"temp": 21}', "call_1", "weather")
    assert [m.content for m in back] == [m.content for m in sent]


def test_the_context_block_leads_the_window_as_a_system_message(memory):
    m = memory.create()
    memory.facts.create(m.id, "The user's dog is a beagle called Biscuit.")
    history = ThreadlessChatMessageHistory(m.id, client=memory)
    history.add_user_message("Hello")
    window = history.messages
    assert isinstance(window[0], SystemMessage)
    assert "Biscuit" in window[0].content
    assert window[0].content == history.last_request.context_text
    assert [m.content for m in window[1:]] == ["Hello"]
    assert (
        ThreadlessChatMessageHistory(m.id, client=memory, context_message=False).messages[0].content
        == "Hello"
    )


def test_reading_the_history_stores_nothing(memory):
    m = memory.create()
    history = ThreadlessChatMessageHistory(m.id, client=memory)
    history.add_user_message("one")
    for _ in range(3):
        assert [m.content for m in history.messages] == ["one"]
    assert [e.content for e in memory.entries.list(m.id)] == ["one"]


def test_clear_deletes_the_memory_and_an_external_id_starts_afresh(memory):
    external = "lc-" + uuid.uuid4().hex
    history = ThreadlessChatMessageHistory(external_id=external, client=memory)
    history.add_user_message("forget me")
    old = history.memory_id
    history.clear()
    assert history.messages == []
    assert history.memory_id != old
    assert [x.id for x in memory.list(external_id=external)] == [history.memory_id]


async def test_the_async_methods_use_the_async_client(live_server_proc, errors):
    async with AsyncThreadless(
        api_key=live_server_proc.key, base_url=live_server_proc.url, on_error=errors
    ) as c:
        m = await c.create()
        history = ThreadlessChatMessageHistory(m.id, async_client=c)
        await history.aadd_messages([HumanMessage(content="hi"), AIMessage(content="hello!")])
        await c.flush(10)
        assert [x.content for x in await history.aget_messages()] == ["hi", "hello!"]
        await history.aclear()
        assert history.memory_id != m.id
        assert await history.aget_messages() == []
    assert errors.calls == []


def test_with_the_service_down_the_chain_still_answers_from_the_local_tail(stoppable_server, errors):
    with Threadless(
        api_key=stoppable_server.key, base_url=stoppable_server.url, timeout=2, on_error=errors
    ) as c:
        model = EchoModel(prompts=[])
        chain = RunnableWithMessageHistory(
            model, lambda session_id: ThreadlessChatMessageHistory(session_id, client=c, on_error=errors)
        )
        config = {"configurable": {"session_id": c.create().id}}
        chain.invoke([HumanMessage(content="My name is Ada.")], config=config)
        c.flush(10)
        chain.invoke([HumanMessage(content="Noted?")], config=config)
        c.flush(10)
        with stoppable_server.down():
            answer = chain.invoke([HumanMessage(content="What is my name?")], config=config)
        assert answer.content == "reply 3 to What is my name?"
        assert [m.content for m in model.prompts[2]] == [
            "My name is Ada.",
            "reply 1 to My name is Ada.",
            "Noted?",
            "reply 2 to Noted?",
            "What is my name?",
        ]
        operations = [ctx["operation"] for ctx in errors.contexts]
        assert operations and set(operations) == {"decorate"}
        assert all(e.code == "connection_error" for e in errors.errors)


def test_a_new_external_id_answers_during_an_outage_without_a_create_call(stoppable_server, errors):
    with Threadless(
        api_key=stoppable_server.key, base_url=stoppable_server.url, timeout=2, on_error=errors
    ) as c:
        model = EchoModel(prompts=[])
        chain = RunnableWithMessageHistory(
            model, lambda session_id: ThreadlessChatMessageHistory(external_id=session_id, client=c)
        )
        config = {"configurable": {"session_id": "lc-new-" + uuid.uuid4().hex}}
        with stoppable_server.down():
            answer = chain.invoke([HumanMessage(content="Hello?")], config=config)
        assert answer.content == "reply 1 to Hello?"
        assert [m.content for m in model.prompts[0]] == ["Hello?"]
        assert {ctx["operation"] for ctx in errors.contexts} == {"decorate"}
        assert all(ctx.get("external_id", "").startswith("lc-new-") for ctx in errors.contexts)
