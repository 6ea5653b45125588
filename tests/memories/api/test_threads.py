"""Threads (SPEC 4.10): one memory of a subject, many conversations. decorate, report, search and
entries take `thread`; the thread routes list, show and delete them (the access matrix is in
test_access.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.models import Entry, Fact, Memory, Thread, Turn
from tests.fixtures.api import decorate, error_of, post, report
from tests.fixtures.background import drain

USER = "user"


def say(client, memory_id: str, text: str, thread: str | None = None, reply: str = "Noted.") -> dict:
    """One exchange in a thread: decorate the user's message, report the reply."""
    extra = {} if thread is None else {"thread": thread}
    answer = decorate(client, memory_id, [{"role": USER, "content": text}], **extra)
    assert answer.status_code == 200, answer.content
    assert report(client, memory_id, [{"role": "assistant", "content": reply}], **extra).status_code == 202
    return answer.json()


def test_each_thread_numbers_its_own_turns_and_report_joins_its_newest(cast, memory_a):
    say(cast.a, memory_a.id, "first in default")
    say(cast.a, memory_a.id, "second in default")
    assert say(cast.a, memory_a.id, "first in t1", thread="t1")["turn"] == 1
    answer = decorate(cast.a, memory_a.id, [{"role": USER, "content": "third in default"}])
    assert answer.json()["turn"] == 3
    assert (
        report(cast.a, memory_a.id, [{"role": "assistant", "content": "in t1"}], thread="t1").json()["turn"]
        == 1
    )
    rows = list(
        Entry.objects.filter(memory=memory_a).order_by("seq").values_list("seq", "thread", "turn", "role")
    )
    assert [r[0] for r in rows] == list(range(1, 9))  # seq unique and ordered across the memory
    assert rows[-1] == (8, "t1", 1, "assistant")
    assert Turn.objects.filter(memory=memory_a, thread="t1").count() == 1


def test_the_window_and_the_failures_are_the_threads_own(cast, memory_a):
    say(cast.a, memory_a.id, "default: the blue folder")
    say(cast.a, memory_a.id, "t1: pay the invoice", thread="t1")
    report(
        cast.a,
        memory_a.id,
        [],
        failures=[{"task_id": "pay", "error": "payments down"}],
        thread="t1",
    )
    answer = decorate(cast.a, memory_a.id, [{"role": USER, "content": "hello"}], thread="t1", recall=False)
    body = answer.json()
    assert [m["content"] for m in body["messages"]] == ["t1: pay the invoice", "Noted.", "hello"]
    assert "payments down" in body["context_text"]  # t1's failure
    default = decorate(cast.a, memory_a.id, [{"role": USER, "content": "again"}], recall=False).json()
    assert [m["content"] for m in default["messages"]] == ["default: the blue folder", "Noted.", "again"]
    assert "payments down" not in default["context_text"]


def test_a_decorate_in_a_named_thread_makes_as_many_statements_as_in_the_default_thread(cast):
    counts = {}
    for thread in (None, "t1"):
        memory_id = cast.a.post("/v1/memories", {}, format="json").json()["id"]
        for i in range(3):
            say(cast.a, memory_id, f"hello {i}", thread=thread)
        with CaptureQueriesContext(connection) as ctx:
            extra = {} if thread is None else {"thread": thread}
            assert decorate(cast.a, memory_id, [{"role": USER, "content": "hi"}], **extra).status_code == 200
        counts[thread] = len(ctx.captured_queries)
    # PostgreSQL: the thread's row is a part of decorate's one statement; SQLite (no round trips)
    # writes it with a statement of its own in the same write transaction.
    assert counts["t1"] == counts[None] + (0 if connection.vendor == "postgresql" else 1), counts


def test_a_thread_must_follow_the_external_id_rules(cast, memory_a):
    for bad in ("", "a\nb", "x" * 201, 5):
        for response in (
            decorate(cast.a, memory_a.id, [{"role": USER, "content": "hi"}], thread=bad),
            report(cast.a, memory_a.id, [{"role": "assistant", "content": "x"}], thread=bad),
            post(cast.a, f"/v1/memories/{memory_a.id}/search", {"query": "hi", "thread": bad}),
        ):
            assert error_of(response, 400, "invalid_request")["message"].startswith("thread"), bad
    assert error_of(cast.a.get(f"/v1/memories/{memory_a.id}/entries?thread="), 400, "invalid_request")[
        "message"
    ].startswith("thread")
    assert not Entry.objects.filter(memory=memory_a).exists()


def test_entries_carry_their_thread_and_filter_by_it(cast, memory_a):
    say(cast.a, memory_a.id, "in default")
    say(cast.a, memory_a.id, "in t1", thread="t1")
    every = cast.a.get(f"/v1/memories/{memory_a.id}/entries").json()["data"]
    assert [e["thread"] for e in every] == ["default", "default", "t1", "t1"]
    only = cast.a.get(f"/v1/memories/{memory_a.id}/entries?thread=t1").json()["data"]
    assert [e["content"] for e in only] == ["in t1", "Noted."]


def test_a_new_thread_sees_what_the_subject_said_in_another(cast, memory_a):
    say(cast.a, memory_a.id, "I'm vegetarian and live in Porto", thread="t1", reply="Got it.")
    say(cast.a, memory_a.id, "What's a good sci-fi novel?", thread="t2", reply="Try Solaris.")
    drain()
    answer = decorate(
        cast.a, memory_a.id, [{"role": USER, "content": "book me a restaurant for tonight"}], thread="t3"
    )
    body = answer.json()
    assert body["turn"] == 1
    assert [m["content"] for m in body["messages"]] == ["book me a restaurant for tonight"]
    text = body["instructions"]
    assert "vegetarian" in text.lower() and "Porto" in text, text
    assert "Solaris" not in text  # another thread's window is not this one's


def test_recall_spans_threads_and_names_the_date_and_thread_of_each_snippet(cast, memory_a):
    say(cast.a, memory_a.id, "My sister Ana's wedding is in Braga in the old cathedral", thread="t1")
    drain()
    body = decorate(
        cast.a, memory_a.id, [{"role": USER, "content": "Where is Ana's wedding?"}], thread="t3"
    ).json()
    today = datetime.now(UTC).date().isoformat()
    recalled = body["context"]["recalled"]
    assert recalled and recalled[0]["thread"] == "t1", body["context_text"]
    assert f"{today}:\n- (thread t1) user: My sister Ana's wedding is in Braga" in body["context_text"]


def test_recall_never_returns_what_the_threads_own_window_shows(cast, memory_a):
    say(cast.a, memory_a.id, "The parking code is 4471 at the Braga office", thread="t1")
    say(cast.a, memory_a.id, "Unrelated chatter about tea", thread="t2")
    drain()
    body = decorate(
        cast.a, memory_a.id, [{"role": USER, "content": "what is the parking code?"}], thread="t1"
    ).json()
    assert "4471" in body["messages"][0]["content"]  # in the window
    assert all(r["seq"] != 1 for r in body["context"]["recalled"])
    assert "Recalled" not in body["context_text"] or "4471" not in body["context_text"]


def test_search_answers_every_thread_or_one_with_thread_seq_and_time(cast, memory_a):
    say(cast.a, memory_a.id, "The lighthouse keeper named his cat Pixel", thread="t1")
    say(cast.a, memory_a.id, "Pixel the cat sleeps all day")
    drain()
    hits = post(cast.a, f"/v1/memories/{memory_a.id}/search", {"query": "Pixel cat"}).json()["data"]
    assert {h["thread"] for h in hits} == {"t1", "default"}
    assert all(isinstance(h["seq"], int) and h["created_at"] for h in hits)
    narrowed = post(cast.a, f"/v1/memories/{memory_a.id}/search", {"query": "Pixel cat", "thread": "t1"})
    assert [h["thread"] for h in narrowed.json()["data"]] == ["t1"]


def test_search_of_one_thread_finds_its_match_behind_the_memorys_newest_matches(cast, memory_a):
    url = f"/v1/memories/{memory_a.id}"
    said = [{"role": USER, "content": "The lighthouse keeper named his cat Pixel"}]
    assert post(cast.a, f"{url}/messages", {"thread": "t1", "messages": said}).status_code == 202
    # More newer matches in another thread than one read of the index takes for a word.
    chatter = [{"role": USER, "content": f"Pixel the cat napped again, day {i}"} for i in range(250)]
    assert post(cast.a, f"{url}/messages", {"messages": chatter}).status_code == 202
    drain()
    hits = post(cast.a, f"{url}/search", {"query": "Pixel cat", "thread": "t1"}).json()["data"]
    assert [(h["thread"], h["snippet"]) for h in hits] == [("t1", said[0]["content"])]


def test_the_threads_list_newest_activity_first_with_their_counts_and_a_cursor(cast, memory_a):
    say(cast.a, memory_a.id, "old default")
    say(cast.a, memory_a.id, "in t1", thread="t1")
    say(cast.a, memory_a.id, "again in t1", thread="t1")
    say(cast.a, memory_a.id, "in t2", thread="t2")
    first = cast.a.get(f"/v1/memories/{memory_a.id}/threads?limit=2").json()
    assert [t["id"] for t in first["data"]] == ["t2", "t1"]
    assert first["data"][1] | {"created_at": None, "updated_at": None} == {
        "id": "t1",
        "turns": 2,
        "messages": 4,
        "tokens": Thread.objects.get(memory=memory_a, name="t1").token_count,
        "created_at": None,
        "updated_at": None,
    }
    rest = cast.a.get(f"/v1/memories/{memory_a.id}/threads?limit=2&cursor={first['next_cursor']}").json()
    assert [t["id"] for t in rest["data"]] == ["default"] and rest["next_cursor"] is None
    default = cast.a.get(f"/v1/memories/{memory_a.id}/threads/default").json()
    assert (default["turns"], default["messages"]) == (1, 2)
    error_of(cast.a.get(f"/v1/memories/{memory_a.id}/threads/t9"), 404, "not_found")


def test_an_existing_memory_reads_as_one_default_thread(cast, memory_a):
    say(cast.a, memory_a.id, "before threads existed")
    listed = cast.a.get(f"/v1/memories/{memory_a.id}/threads").json()["data"]
    assert [(t["id"], t["turns"], t["messages"]) for t in listed] == [("default", 1, 2)]
    assert not Thread.objects.exists()
    assert cast.a.get(f"/v1/memories/{memory_a.id}/threads").status_code == 200
    empty = cast.a.post("/v1/memories", {}, format="json").json()
    assert cast.a.get(f"/v1/memories/{empty['id']}/threads").json() == {"data": [], "next_cursor": None}


def test_deleting_a_thread_answers_a_receipt_and_keeps_facts_with_sources_elsewhere(cast, memory_a):
    say(cast.a, memory_a.id, "I live in Porto", thread="t1")
    say(cast.a, memory_a.id, "I'm allergic to peanuts", thread="t1")
    say(cast.a, memory_a.id, "I'm allergic to peanuts")
    drain()
    facts = {f.text: f for f in Fact.objects.filter(memory=memory_a)}
    assert len(facts) == 2, facts
    response = cast.a.delete(f"/v1/memories/{memory_a.id}/threads/t1")
    assert response.status_code == 200, response.content
    receipt = response.json()["deleted"]
    assert receipt["threads"] == 1 and receipt["entries"] == 4 and receipt["turns"] == 2
    assert receipt["facts"] == 1 and receipt["index_rows"] >= 4
    left = list(Fact.objects.filter(memory=memory_a))
    assert len(left) == 1 and "peanut" in left[0].text.lower()
    assert all(Entry.objects.get(pk=i).thread == "default" for i in left[0].source_entry_ids)
    memory = Memory.objects.get(pk=memory_a.pk)
    assert (memory.message_count, memory.threads_message_count) == (2, 0)
    assert not Thread.objects.filter(memory=memory_a).exists()
    assert not Entry.objects.filter(memory=memory_a, thread="t1").exists()
    error_of(cast.a.get(f"/v1/memories/{memory_a.id}/threads/t1"), 404, "not_found")
    hits = post(cast.a, f"/v1/memories/{memory_a.id}/search", {"query": "Porto"}).json()["data"]
    assert hits == []


def test_the_external_id_forms_reach_only_this_projects_memory(cast, memory_b):
    post(
        cast.b,
        "/v1/memories/external/user-9/decorate",
        {"messages": [{"role": USER, "content": "hi"}], "thread": "t1"},
    )
    error_of(cast.a.get("/v1/memories/external/user-9/threads/t1"), 404, "not_found")
    error_of(cast.a.delete("/v1/memories/external/user-9/threads/t1"), 404, "not_found")
    assert cast.a.get("/v1/memories/external/user-9/threads").json()["data"] == []
    theirs = cast.b.get("/v1/memories/external/user-9/threads").json()["data"]
    assert [t["id"] for t in theirs] == ["t1"]
    assert Thread.objects.filter(name="t1").count() == 1


@pytest.mark.parametrize("path", ["threads", "threads/default", "messages"])
def test_the_thread_routes_404_for_another_projects_memory(cast, memory_b, path):
    method = cast.a.post if path == "messages" else cast.a.get
    body = {"messages": [{"role": USER, "content": "hi"}]} if path == "messages" else None
    error_of(method(f"/v1/memories/{memory_b.id}/{path}", body, format="json"), 404, "not_found")
    assert not Entry.objects.filter(memory=memory_b).exists()


def test_each_thread_folds_its_own_history_into_its_own_summary(cast, memory_a):
    from tests.fixtures.background import CORPUS

    long = [["We booked the Hotel Adler in Innsbruck for March 3.", "Noted."], *CORPUS["filler"] * 3]
    for user, assistant in long:
        decorate(cast.a, memory_a.id, [{"role": USER, "content": user}], thread="t1", budget_tokens=200)
        report(cast.a, memory_a.id, [{"role": "assistant", "content": assistant}], thread="t1")
    say(cast.a, memory_a.id, "a short default thread")
    drain()
    thread = Thread.objects.get(memory=memory_a, name="t1")
    assert thread.summary and thread.summary_upto_seq > 0
    assert Memory.objects.get(pk=memory_a.pk).summary == ""  # the default thread had nothing to fold
    ask = [{"role": USER, "content": "hi"}]
    in_t1 = decorate(cast.a, memory_a.id, ask, thread="t1", budget_tokens=200, store=False).json()
    assert in_t1["context"]["summary"] == thread.summary
    assert (
        decorate(cast.a, memory_a.id, ask, budget_tokens=200, store=False).json()["context"]["summary"] == ""
    )


def test_deleting_the_default_thread_starts_it_afresh_and_keeps_the_others(cast, memory_a):
    say(cast.a, memory_a.id, "in default")
    say(cast.a, memory_a.id, "in t1", thread="t1")
    receipt = cast.a.delete(f"/v1/memories/{memory_a.id}/threads/default").json()["deleted"]
    assert (receipt["entries"], receipt["turns"]) == (2, 1)
    assert [t["id"] for t in cast.a.get(f"/v1/memories/{memory_a.id}/threads").json()["data"]] == ["t1"]
    assert say(cast.a, memory_a.id, "default again")["turn"] == 1
    memory = Memory.objects.get(pk=memory_a.pk)
    assert (memory.message_count, memory.threads_message_count) == (4, 2)
