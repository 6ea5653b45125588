"""The SDK against a real Threadless server (uvicorn subprocess with its own database)."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta

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


# --- threads, history import and reads by external id ---------------------------------------------


def wait_until_processed(memory, memory_id, timeout=90.0):
    deadline = time.monotonic() + timeout
    while memory.get(memory_id).processing != "processed":
        assert time.monotonic() < deadline, "the worker did not process the memory in time"
        time.sleep(0.2)


def test_two_threads_of_one_memory_have_their_own_windows_and_share_its_facts(live_worker_server, errors):
    server = live_worker_server  # facts and the recall index are the worker's
    user_id = "user-" + uuid.uuid4().hex
    with Threadless(api_key=server.key, base_url=server.url, on_error=errors) as memory:
        memory.decorate(external_id=user_id, thread="pets", messages=[user("I have a beagle named Biscuit.")])
        memory.report(external_id=user_id, thread="pets", messages=[assistant("Lovely!")])
        memory.decorate(external_id=user_id, thread="trip", messages=[user("Book a train to Lyon.")])
        memory.report(external_id=user_id, thread="trip", messages=[assistant("Booked.")])
        assert memory.flush(10)
        wait_until_processed(memory, memory.get(external_id=user_id).id)
        trip = memory.decorate(external_id=user_id, thread="trip", messages=[user("What is my dog called?")])
        in_trip = memory.search(external_id=user_id, query="Lyon", thread="trip")
        in_pets = memory.search(external_id=user_id, query="Lyon", thread="pets")
    assert trip.thread == "trip" and trip.turn == 2
    assert [m["content"] for m in trip.messages] == [
        "Book a train to Lyon.",
        "Booked.",
        "What is my dog called?",
    ]
    assert "beagle named Biscuit" in trip.context_text  # learned in "pets", known in "trip"
    assert "Lyon" in in_trip[0]["snippet"] and in_trip[0]["created_at"]
    assert {h["thread"] for h in in_trip} == {"trip"}
    assert "Lyon" not in str(in_pets) and {h["thread"] for h in in_pets} <= {"pets"}
    assert errors.calls == []


def test_threads_are_listed_read_and_deleted_by_external_id(memory, errors):
    user_id = "user-" + uuid.uuid4().hex
    for thread in ("a", "b/2"):
        memory.decorate(external_id=user_id, thread=thread, messages=[user(f"hello from {thread}")])
        memory.report(external_id=user_id, thread=thread, messages=[assistant(f"hi in {thread}")])
    assert memory.flush(10)
    listed = memory.threads.list(external_id=user_id)
    assert [t.id for t in listed] == ["b/2", "a"]  # newest activity first
    assert listed.next_cursor is None
    one = memory.threads.get(external_id=user_id, thread="a")
    assert (one.id, one.turns, one.messages) == ("a", 1, 2) and one.tokens > 0
    assert memory.threads.get(external_id=user_id, thread="b/2").id == "b/2"
    receipt = memory.threads.delete(external_id=user_id, thread="a")
    assert (receipt["threads"], receipt["entries"], receipt["turns"]) == (1, 2, 1)
    with pytest.raises(ThreadlessError) as info:
        memory.threads.get(external_id=user_id, thread="a")
    assert info.value.code == "not_found"
    m = memory.get(external_id=user_id)
    assert [t.id for t in memory.threads.list(m.id)] == ["b/2"]
    assert [(e.thread, e.content) for e in memory.entries.list(m.id)] == [
        ("b/2", "hello from b/2"),
        ("b/2", "hi in b/2"),
    ]
    assert errors.calls == []


def test_import_messages_keeps_the_times_given_and_raises_instead_of_falling_back(memory, errors):
    user_id = "user-" + uuid.uuid4().hex
    said = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)
    answer = memory.import_messages(
        external_id=user_id,
        thread="ticket-981",
        messages=[
            {"role": "user", "content": "My order arrived broken", "created_at": said},
            {"role": "assistant", "content": "Sorry!", "created_at": "2025-03-01T10:31:00+01:00"},
        ],
        idempotency_key=uuid.uuid4().hex,
    )
    assert answer == {"accepted": 2, "thread": "ticket-981", "turns": [1, 1]}
    entries = memory.entries.list(external_id=user_id, thread="ticket-981")
    assert [datetime.fromisoformat(e.created_at) for e in entries] == [said, said + timedelta(minutes=1)]
    assert [e.turn for e in entries] == [1, 1]
    with pytest.raises(ThreadlessError) as older:
        memory.import_messages(
            external_id=user_id,
            thread="ticket-981",
            messages=[{"role": "user", "content": "Earlier?", "created_at": "2024-01-01T00:00:00+00:00"}],
        )
    assert (older.value.status, older.value.code) == (400, "invalid_request")
    assert "messages[0].created_at" in older.value.message
    with pytest.raises(ThreadlessError) as naive:
        memory.import_messages(
            external_id=user_id,
            messages=[{"role": "user", "content": "x", "created_at": datetime(2025, 1, 2)}],
        )
    assert naive.value.code == "invalid_request" and naive.value.status is None  # refused before sending
    assert len(memory.entries.list(external_id=user_id)) == 2
    assert errors.calls == []


def test_search_filters_and_facts_ranked_with_messages(memory, errors):
    user_id = "user-" + uuid.uuid4().hex
    memory.import_messages(external_id=user_id, messages=[user("I have a beagle called Biscuit.")])
    fact = memory.facts.create(
        memory.get(external_id=user_id).id, "The user's dog is a beagle called Biscuit."
    )
    since = datetime.now(UTC) - timedelta(minutes=5)
    hits = memory.search(
        external_id=user_id, query="beagle Biscuit", include=["messages", "facts"], after=since, min_score=0.1
    )
    assert [(h["type"], h["id"]) for h in hits if h["type"] == "fact"] == [("fact", fact.id)]
    assert hits[0]["score"] >= 0.1
    assert memory.search(external_id=user_id, query="beagle", include=["facts"], before=since) == []
    with pytest.raises(ThreadlessError) as refused:
        memory.search(external_id=user_id, query="beagle", role="system")
    assert (refused.value.status, refused.value.code) == (400, "invalid_request")
    assert refused.value.message.startswith("role")
    with pytest.raises(ThreadlessError) as naive:
        memory.search(external_id=user_id, query="beagle", after=datetime(2025, 1, 2))
    assert naive.value.status is None and "after" in naive.value.message  # refused before sending
    assert errors.calls == []


def test_reads_by_external_id_find_the_memory_and_create_none(memory):
    user_id = "user-" + uuid.uuid4().hex
    memory.decorate(external_id=user_id, messages=[user("I have a beagle called Biscuit.")])
    m = memory.get(external_id=user_id)
    assert m.external_id == user_id
    fact = memory.facts.create(m.id, "The user's dog is called Biscuit.")
    assert [f.id for f in memory.facts.list(external_id=user_id)] == [fact.id]
    said = ["I have a beagle called Biscuit."]
    assert [e.content for e in memory.entries.list(external_id=user_id)] == said
    assert [e.content for e in memory.entries.all(external_id=user_id)] == said
    assert isinstance(memory.search(external_id=user_id, query="beagle"), list)
    assert memory.files.command(
        {"command": "create", "path": "/memories/dog.md", "file_text": "Biscuit\n"}, external_id=user_id
    ) == {"result": "File created successfully at: /memories/dog.md", "is_error": False}
    nobody = "nobody-" + uuid.uuid4().hex
    with pytest.raises(ThreadlessError) as info:
        memory.get(external_id=nobody)
    assert (info.value.status, info.value.code) == (404, "not_found")
    assert memory.search(external_id=nobody, query="beagle") == []
    assert list(memory.facts.list(external_id=nobody)) == []
    assert list(memory.entries.list(external_id=nobody)) == []
    assert list(memory.threads.list(external_id=nobody)) == []
    assert list(memory.list(external_id=nobody)) == []  # reading created nothing


async def test_the_async_client_has_threads_import_and_reads_by_external_id(live_server_proc, errors):
    user_id = "user-" + uuid.uuid4().hex
    async with AsyncThreadless(
        api_key=live_server_proc.key, base_url=live_server_proc.url, on_error=errors
    ) as memory:
        answer = await memory.import_messages(
            external_id=user_id,
            thread="old",
            messages=[{"role": "user", "content": "hi, in 2025", "created_at": "2025-01-02T03:04:05+00:00"}],
        )
        assert answer["accepted"] == 1
        new = await memory.decorate(external_id=user_id, thread="new", messages=[user("hello now")])
        assert [m["content"] for m in new.messages] == ["hello now"]
        assert [t.id for t in await memory.threads.list(external_id=user_id)] == ["new", "old"]
        assert (await memory.threads.get(external_id=user_id, thread="old")).messages == 1
        assert (await memory.get(external_id=user_id)).id == new.memory_id
        assert [e.thread async for e in memory.entries.all(external_id=user_id)] == ["old", "new"]
        assert list(await memory.facts.list(external_id=user_id)) == []
        assert isinstance(await memory.search(external_id=user_id, query="hello", thread="old"), list)
        assert (await memory.threads.delete(external_id=user_id, thread="old"))["entries"] == 1
        assert (
            await memory.update(external_id=user_id, instructions="Be brief.")
        ).instructions == "Be brief."
        fact = await memory.facts.create(external_id=user_id, text="The user likes tea.")
        changed = await memory.facts.update(
            external_id=user_id, fact_id=fact.id, text="The user likes green tea."
        )
        assert changed.text == "The user likes green tea."
        await memory.facts.delete(external_id=user_id, fact_id=fact.id)
        done = await memory.files.command(
            {"command": "create", "path": "/memories/a.md", "file_text": "A\n"}, external_id=user_id
        )
        assert done["is_error"] is False
        await memory.delete(external_id=user_id)
        assert list(await memory.list(external_id=user_id)) == []
    assert errors.calls == []


def test_every_call_on_one_memory_takes_its_external_id(memory):
    user_id = "user-" + uuid.uuid4().hex
    memory.decorate(external_id=user_id, messages=[user("I have a beagle.")])
    assert memory.update(external_id=user_id, instructions="Be brief.").instructions == "Be brief."
    fact = memory.facts.create(external_id=user_id, text="The user's dog is called Biscuit.")
    changed = memory.facts.update(external_id=user_id, fact_id=fact.id, text="The user's dog is called Max.")
    assert (changed.id, changed.text) == (fact.id, "The user's dog is called Max.")
    assert [f.text for f in memory.facts.list(external_id=user_id)] == ["The user's dog is called Max."]
    memory.facts.delete(external_id=user_id, fact_id=fact.id)
    assert list(memory.facts.list(external_id=user_id)) == []
    command = {"command": "create", "path": "/memories/dog.md", "file_text": "Max\n"}
    assert memory.files.command(command, external_id=user_id)["is_error"] is False
    assert [f["path"] for f in memory.files.list(external_id=user_id)] == ["/memories/dog.md"]
    memory.delete(external_id=user_id)
    assert list(memory.list(external_id=user_id)) == []
    with pytest.raises(ThreadlessError) as info:  # changing by an external id no memory has creates none
        memory.facts.create(external_id=user_id, text="The user likes tea.")
    assert (info.value.status, info.value.code) == (404, "not_found")
    with pytest.raises(TypeError):  # the command comes first; the memory is named by keyword
        memory.files.command("mem_x", command)
    assert list(memory.list(external_id=user_id)) == []
