"""The SDK against a real Threadless server (uvicorn subprocess with its own database)."""

from __future__ import annotations

import uuid

import pytest
from threadless import AsyncThreadless, Threadless, ThreadlessError

pytestmark = pytest.mark.live


@pytest.fixture
def memory(live_server_proc, errors):
    with Threadless(
        api_key=live_server_proc.key, base_url=live_server_proc.url, timeout=15, on_error=errors
    ) as client:
        yield client


def user(text):
    return {"role": "user", "content": text}


def assistant(text):
    return {"role": "assistant", "content": text}


def test_create_get_update_list_and_delete(memory):
    tag = uuid.uuid4().hex
    m = memory.create(metadata={"user": "42", "tag": tag}, instructions="Be kind.")
    assert m.id.startswith("mem_")
    assert m.metadata == {"user": "42", "tag": tag}
    assert memory.get(m.id).instructions == "Be kind."
    assert memory.update(m.id, instructions="Be brief.").instructions == "Be brief."
    assert [x.id for x in memory.list(metadata={"tag": tag})] == [m.id]
    memory.delete(m.id)
    with pytest.raises(ThreadlessError) as info:
        memory.get(m.id)
    assert (info.value.status, info.value.code) == (404, "not_found")
    assert info.value.hint and info.value.request_id


def test_external_id_is_get_or_create(memory):
    external = "user-" + uuid.uuid4().hex
    first = memory.create(external_id=external)
    assert memory.create(external_id=external).id == first.id


def test_decorate_then_report_then_the_next_decorate_sees_the_reply(memory, errors):
    m = memory.create()
    first = memory.decorate(m.id, [user("I have a beagle called Biscuit.")], instructions="Be kind.")
    assert not first.degraded
    assert first.turn == 1
    assert first.instructions.startswith("Be kind.")
    assert first.messages == [user("I have a beagle called Biscuit.")]
    memory.report(m.id, [assistant("Biscuit is a lovely name!")])
    second = memory.decorate(m.id, [user("What is my dog called?")])  # waits for the report
    assert [x["content"] for x in second.messages] == [
        "I have a beagle called Biscuit.",
        "Biscuit is a lovely name!",
        "What is my dog called?",
    ]
    assert second.instructions.startswith("Be kind.")  # the memory's latest instructions
    assert second.to_openai()[0]["role"] == "system"
    assert second.to_anthropic()["messages"][0]["role"] == "user"
    assert errors.calls == []
    entries = memory.entries.list(m.id)
    assert [e.role for e in entries] == ["user", "assistant", "user"]


def test_unknown_memory_raises_not_found_from_decorate(memory, errors):
    with pytest.raises(ThreadlessError) as info:
        memory.decorate("mem_doesnotexist", [user("hi")])
    assert (info.value.status, info.value.code) == (404, "not_found")
    assert errors.calls == []


def test_a_bad_message_raises_invalid_request_naming_the_field(memory):
    m = memory.create()
    with pytest.raises(ThreadlessError) as info:
        memory.decorate(m.id, [{"role": "wizard", "content": "hi"}])
    assert (info.value.status, info.value.code) == (400, "invalid_request")
    assert "role" in info.value.message


def test_a_wrong_key_raises_unauthorized(live_server_proc, errors):
    with Threadless(api_key="tl_proj_wrong", base_url=live_server_proc.url, on_error=errors) as memory:
        with pytest.raises(ThreadlessError) as info:
            memory.decorate("mem_x", [user("hi")])
        memory.report("mem_x", [assistant("hi")])
        memory.flush(10)
    assert (info.value.status, info.value.code) == (401, "unauthorized")
    assert [(e.status, c) for e, c in errors.calls] == [(401, {"operation": "report", "memory_id": "mem_x"})]


def test_idempotency_key_stores_a_retried_decorate_once(memory):
    m = memory.create()
    key = uuid.uuid4().hex
    memory.decorate(m.id, [user("once")], idempotency_key=key)
    memory.decorate(m.id, [user("once")], idempotency_key=key)
    memory.report(m.id, [assistant("ok")], idempotency_key=key + "-r")
    memory.report(m.id, [assistant("ok")], idempotency_key=key + "-r")
    assert memory.flush(10)
    assert [e.content for e in memory.entries.all(m.id)] == ["once", "ok"]


def test_facts_helpers(memory):
    m = memory.create()
    fact = memory.facts.create(m.id, "The user's dog is called Biscuit.")
    assert [f.id for f in memory.facts.list(m.id)] == [fact.id]
    assert memory.facts.update(m.id, fact.id, "The user's dog is Biscuit, a beagle.").text.endswith(
        "a beagle."
    )
    memory.facts.delete(m.id, fact.id)
    assert list(memory.facts.list(m.id)) == []
    assert isinstance(memory.search(m.id, "dog"), list)


def test_report_failures_are_sent(memory, errors):
    m = memory.create()
    memory.decorate(m.id, [user("book a table")])
    memory.report(
        m.id,
        [assistant("Sorry, I could not book it.")],
        failures=[{"task_id": "book", "error": "HTTP 500 from https://api.example.com/book"}],
    )
    assert memory.flush(10)
    assert errors.calls == []
    kinds = [e.kind for e in memory.entries.list(m.id, include_uncommitted=True)]
    assert "message" in kinds and len(kinds) > 2


async def test_async_client_round_trip(live_server_proc, errors):
    async with AsyncThreadless(
        api_key=live_server_proc.key, base_url=live_server_proc.url, on_error=errors
    ) as memory:
        m = await memory.create(metadata={"async": "yes"})
        first = await memory.decorate(m.id, [user("hello")], instructions="Hi.")
        assert not first.degraded
        memory.report(m.id, [assistant("hello back")])
        second = await memory.decorate(m.id, [user("again")])
        assert [x["content"] for x in second.messages] == ["hello", "hello back", "again"]
        assert len(await memory.entries.list(m.id)) == 3
        assert [e.role async for e in memory.entries.all(m.id)] == ["user", "assistant", "user"]
        fact = await memory.facts.create(m.id, "The user likes tea.")
        assert [f.text for f in await memory.facts.list(m.id)] == ["The user likes tea."]
        assert (
            await memory.facts.update(m.id, fact.id, "The user likes green tea.")
        ).text == "The user likes green tea."
        await memory.facts.delete(m.id, fact.id)
        await memory.delete(m.id)
    assert errors.calls == []


def test_the_agent_keeps_answering_while_the_server_is_stopped(live_server_proc, errors):
    """Stop a real server mid-conversation: decorate falls back to the tail, reports are skipped,
    and once the server is back the conversation resumes from what it stored."""
    server = live_server_proc
    with Threadless(api_key=server.key, base_url=server.url, timeout=3, on_error=errors) as memory:
        m = memory.create()
        memory.decorate(m.id, [user("My name is Ada.")], instructions="Be kind.")
        memory.report(m.id, [assistant("Hello Ada!")])
        memory.flush(10)

        server.stop_web()
        try:
            down = memory.decorate(m.id, [user("Are you still there?")])
            assert down.degraded
            assert down.instructions.startswith("Be kind.")
            assert [x["content"] for x in down.messages] == [
                "My name is Ada.",
                "Hello Ada!",
                "Are you still there?",
            ]
            memory.report(m.id, [assistant("Yes (offline).")])  # skipped: its user message was never stored
            assert memory.flush(10)
            assert [c["operation"] for c in errors.contexts] == ["decorate"]
        finally:
            server.start_web()  # the session's other tests use this server too
        back = memory.decorate(m.id, [user("Good, you're back.")])
        assert not back.degraded
        assert [x["content"] for x in back.messages] == [
            "My name is Ada.",
            "Hello Ada!",
            "Good, you're back.",
        ]
