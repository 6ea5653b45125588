"""POST /v1/memories/{id}/messages (SPEC 4.11): history imported with its own times, all or
nothing, its background work queued as after report; facts hold from the time they were said."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memories.models import Entry, Fact, Memory, Outbox, Turn
from tests.fixtures.api import error_of, post
from tests.fixtures.background import drain


def at(day: str, hour: int = 9) -> str:
    return f"{day}T{hour:02d}:00:00+00:00"


def history(*lines: tuple[str, str, str]) -> list[dict]:
    """(role, text, time) → messages."""
    return [{"role": role, "content": text, "created_at": when} for role, text, when in lines]


def send(client, memory_id: str, messages: list[dict], thread: str | None = None, **headers):
    body = {"messages": messages} | ({} if thread is None else {"thread": thread})
    return post(client, f"/v1/memories/{memory_id}/messages", body, **headers)


def test_an_import_is_stored_with_its_times_and_turns_and_processed_in_the_background(cast, memory_a):
    response = send(
        cast.a,
        memory_a.id,
        history(
            ("user", "Hi, I'm planning a trip", at("2024-03-01")),
            ("assistant", "Where to?", at("2024-03-01", 10)),
            ("user", "Lisbon", at("2024-03-02")),
        ),
        thread="trip",
    )
    assert response.status_code == 202, response.content
    assert response.json() == {"accepted": 3, "thread": "trip", "turns": [1, 2]}
    stored = list(Entry.objects.filter(memory=memory_a).order_by("seq"))
    assert [(e.thread, e.turn, e.created_at.isoformat()) for e in stored] == [
        ("trip", 1, "2024-03-01T09:00:00+00:00"),
        ("trip", 1, "2024-03-01T10:00:00+00:00"),
        ("trip", 2, "2024-03-02T09:00:00+00:00"),
    ]
    assert Turn.objects.filter(memory=memory_a, thread="trip").count() == 2
    assert Outbox.objects.get(memory=memory_a).payload == {"from_seq": 1, "to_seq": 3}
    assert cast.a.get(f"/v1/memories/{memory_a.id}").json()["processing"] == "pending"
    drain()
    assert cast.a.get(f"/v1/memories/{memory_a.id}").json()["processing"] == "processed"
    thread = cast.a.get(f"/v1/memories/{memory_a.id}/threads/trip").json()
    assert (thread["turns"], thread["messages"], thread["updated_at"]) == (2, 3, "2024-03-02T09:00:00+00:00")


def test_a_message_without_a_time_is_said_now(cast, memory_a):
    before = datetime.now(UTC)
    assert send(cast.a, memory_a.id, [{"role": "user", "content": "hello"}]).status_code == 202
    assert Entry.objects.get(memory=memory_a).created_at >= before


def test_an_import_refuses_bad_times_naming_the_message_and_stores_nothing(cast, memory_a):
    future = (datetime.now(UTC) + timedelta(minutes=5)).isoformat()
    cases = [
        (history(("user", "a", at("2024-03-02")), ("user", "b", at("2024-03-01"))), "messages[1].created_at"),
        (history(("user", "a", future)), "messages[0].created_at"),
        (history(("user", "a", "2024-03-01T09:00:00")), "messages[0].created_at"),  # no offset
        (history(("user", "a", "yesterday")), "messages[0].created_at"),
        ([{"role": "user", "content": "x"}] * 2001, "messages"),
        ([], "messages"),
    ]
    for messages, field in cases:
        error = error_of(send(cast.a, memory_a.id, messages), 400, "invalid_request")
        assert error["message"].startswith(field), (field, error["message"])
    assert not Entry.objects.filter(memory=memory_a).exists()
    assert not Outbox.objects.filter(memory=memory_a).exists()


def test_a_threads_history_is_imported_oldest_first(cast, memory_a):
    assert send(cast.a, memory_a.id, history(("user", "later", at("2024-05-01"))), "t1").status_code == 202
    error = error_of(
        send(cast.a, memory_a.id, history(("user", "earlier", at("2024-04-01"))), "t1"),
        400,
        "invalid_request",
    )
    assert error["message"].startswith("messages[0].created_at")
    # Another thread has its own newest entry: older history is welcome there.
    assert send(cast.a, memory_a.id, history(("user", "earlier", at("2024-04-01"))), "t2").status_code == 202
    assert Entry.objects.filter(memory=memory_a).count() == 2


def test_an_import_with_an_idempotency_key_is_stored_once(cast, memory_a):
    messages = history(("user", "once", at("2024-03-01")))
    first = send(cast.a, memory_a.id, messages, "t1", idempotency_key="imp-1")
    again = send(
        cast.a, memory_a.id, history(("user", "once", at("2024-03-01"))), "t1", idempotency_key="imp-1"
    )
    assert first.status_code == again.status_code == 202
    assert first.json() == again.json()
    assert Entry.objects.filter(memory=memory_a).count() == 1


def test_two_thousand_messages_are_one_call(cast, memory_a):
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"} for i in range(2000)
    ]
    response = send(cast.a, memory_a.id, messages, "bulk")
    assert response.json() == {"accepted": 2000, "thread": "bulk", "turns": [1, 1000]}
    memory = Memory.objects.get(pk=memory_a.pk)
    assert (memory.last_seq, memory.message_count, memory.threads_message_count) == (2000, 2000, 2000)


def test_the_import_by_external_id_creates_the_memory(cast):
    response = post(
        cast.a, "/v1/memories/external/user-7/messages", {"messages": [{"role": "user", "content": "hi"}]}
    )
    assert response.status_code == 202 and response.json()["thread"] == "default"
    assert Memory.objects.get(external_id="user-7").project_id == cast.project_a.pk


def test_the_facts_that_hold_after_an_import_are_the_newest_said_whatever_the_order(cast, memory_a):
    # Thread A (autumn) is imported first, thread B (spring, older) after it.
    send(cast.a, memory_a.id, history(("user", "I live in Lisbon", at("2024-10-01"))), "a")
    send(cast.a, memory_a.id, history(("user", "I live in Porto", at("2024-03-01"))), "b")
    drain()
    active = [f.text for f in Fact.objects.filter(memory=memory_a, active=True, slot="location")]
    assert len(active) == 1 and "Lisbon" in active[0], active
    fact = cast.a.get(f"/v1/memories/{memory_a.id}/facts").json()["data"][0]
    assert (fact["valid_from"], fact["valid_to"]) == ("2024-10-01T09:00:00+00:00", None)
    # A later statement supersedes it from the time it was said.
    send(cast.a, memory_a.id, history(("user", "I live in Faro", at("2024-12-01"))), "b")
    drain()
    listed = cast.a.get(f"/v1/memories/{memory_a.id}/facts?include_history=true").json()["data"]
    faro = next(f for f in listed if "Faro" in f["text"])
    lisbon = next(f for f in listed if "Lisbon" in f["text"])
    assert faro["active"] and (faro["valid_from"], faro["valid_to"]) == ("2024-12-01T09:00:00+00:00", None)
    assert not lisbon["active"] and lisbon["valid_to"] == "2024-12-01T09:00:00+00:00"


def test_the_import_answer_is_what_get_shows_afterwards(cast):
    """The thread, turns and count the 202 names are the thread GET shows, whose times are its
    messages' (it began when its first message was said, not at the import); an instruction
    without a time (said now) does not make the older history out of order."""
    base = "/v1/memories/external/user-8"
    for thread in ("ticket-981", None):
        messages = [{"role": "system", "content": "Be brief."}] + history(
            ("assistant", "Welcome back.", at("2024-03-01")),
            ("user", "My order arrived broken", at("2024-03-01", 10)),
            ("assistant", "A replacement is on its way.", at("2024-03-01", 11)),
            ("user", "Thanks", at("2024-03-02")),
        )
        body = {"messages": messages} | ({} if thread is None else {"thread": thread})
        answer = post(cast.a, base + "/messages", body)
        assert answer.status_code == 202, answer.content
        answer = answer.json()
        shown = cast.a.get(f"{base}/threads/{answer['thread']}").json()
        assert shown["id"] == answer["thread"] == (thread or "default")
        assert [1, shown["turns"]] == answer["turns"] == [1, 3]
        assert shown["messages"] == answer["accepted"] == 4
        assert (shown["created_at"], shown["updated_at"]) == (at("2024-03-01"), at("2024-03-02")), shown
        listed = {t["id"]: t for t in cast.a.get(base + "/threads").json()["data"]}
        assert listed[answer["thread"]] == shown
    memory = Memory.objects.get(external_id="user-8")
    assert cast.a.get(f"/v1/memories/{memory.id}").json()["counts"]["messages"] == 8
