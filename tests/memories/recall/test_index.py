"""Recall: the search endpoint, recall only from outside the window, the index kept in step with
commit flags and deletes, receipts, compaction and retention."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from memories import recall, services
from memories.compaction import memory_compact
from memories.models import Entry, Fact, Memory
from tests.fixtures.background import CORPUS, converse, drain


@pytest.fixture
def memory(cast):
    memory, _ = services.memory_create(project=cast.project_a, metadata={"user": "42"})
    converse(
        memory,
        [
            ["We booked the Hotel Adler in Innsbruck for March 3.", "Hotel Adler, March 3: noted."],
            ["My dentist appointment is on Tuesday with Dr. Keller.", "Tuesday with Dr. Keller."],
        ],
    )
    converse(memory, CORPUS["filler"][:10])
    drain()
    memory.refresh_from_db()
    return memory


def test_search_answers_ranked_snippets_with_scores_turn_and_date(memory, cast):
    answer = cast.a.post(
        f"/v1/memories/{memory.id}/search", {"query": "Which hotel in Innsbruck?", "limit": 3}, format="json"
    )
    assert answer.status_code == 200
    hits = answer.json()["data"]
    assert 1 <= len(hits) <= 3
    assert "Hotel Adler" in hits[0]["snippet"] and hits[0]["turn"] == 1
    assert set(hits[0]) >= {"entry_id", "seq", "turn", "date", "role", "snippet", "score"}
    assert hits[0]["date"] == timezone.now().date().isoformat()
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_search_checks_its_input_and_its_project(memory, cast):
    url = f"/v1/memories/{memory.id}/search"
    assert cast.a.post(url, {"query": ""}, format="json").status_code == 400
    assert cast.a.post(url, {"query": "x", "limit": 0}, format="json").status_code == 400
    assert (
        cast.a.post(url, {"query": "x", "extra": 1}, format="json").json()["error"]["code"]
        == "invalid_request"
    )
    assert cast.b.post(url, {"query": "hotel"}, format="json").status_code == 404
    assert cast.api().post(url, {"query": "hotel"}, format="json").status_code == 401
    assert cast.a.post(url, {"query": "the and of ?"}, format="json").json() == {"data": []}


def test_search_never_crashes_on_query_syntax(memory, cast):
    for query in [
        '"unbalanced',
        "NEAR(a b)",
        "a AND OR NOT",
        "*",
        "mkey:x",
        "col:(x)",
        "'; DROP TABLE x; --",
        "ünïcödé 日本語 hotel",
    ]:
        answer = cast.a.post(f"/v1/memories/{memory.id}/search", {"query": query}, format="json")
        assert answer.status_code == 200, query


def test_decorate_recalls_only_from_outside_the_window(memory):
    answer = services.memory_decorate(
        memory=memory,
        messages=[{"role": "user", "content": "When is my dentist appointment?"}],
        budget_tokens=300,
        store=False,
    )
    from memories.selectors import memory_window

    window = memory_window(
        memory_id=memory.id,
        before_seq=None,
        budget=300,
        reserved=answer["usage"]["new_tokens"],
        new_has_user=True,
    )
    recalled = answer["context"]["recalled"]
    assert recalled and "Dr. Keller" in recalled[0]["snippet"]
    day = recalled[0]["date"]
    assert "Recalled from earlier" in answer["instructions"] and f"\n{day}:\n" in answer["instructions"]
    assert "- user: My dentist appointment is on Tuesday with Dr. Keller." in answer["instructions"]
    window_texts = {m["content"] for m in answer["messages"]}
    assert all(hit["snippet"] not in window_texts and hit["seq"] < window.first_seq for hit in recalled)
    # With a window that holds everything, nothing is recalled (it is all in view already).
    big = services.memory_decorate(
        memory=memory,
        messages=[{"role": "user", "content": "When is my dentist appointment?"}],
        budget_tokens=60000,
        store=False,
    )
    assert big["context"]["recalled"] == []


def test_uncommitted_messages_leave_the_index_and_come_back(memory):
    entry = Entry.objects.get(memory=memory, seq=1)
    services.entries_set_committed(memory=memory, entry_ids=[entry.id], committed=False)
    assert all(
        h["entry_id"] != entry.id for h in recall.search(memory_id=memory.id, query="Hotel Adler Innsbruck")
    )
    services.entries_set_committed(memory=memory, entry_ids=[entry.id], committed=True)
    assert entry.id in [
        h["entry_id"] for h in recall.search(memory_id=memory.id, query="Hotel Adler Innsbruck")
    ]


def test_deleting_by_metadata_forgets_everything_and_counts_it(memory, cast):
    other, _ = services.memory_create(project=cast.project_a, metadata={"user": "7"})
    converse(other, [["I live in Oslo and the Hotel Adler is my favourite.", "ok"]])
    converse(memory, [["I'm allergic to peanuts.", "noted"]])
    drain()
    memory.refresh_from_db()
    rows = recall.count_rows(memory_id=memory.id)
    entries = Entry.objects.filter(memory=memory).count()
    facts = Fact.objects.filter(memory=memory).count()
    assert rows > 0 and facts == 1
    answer = cast.a.delete("/v1/memories?metadata.user=42")
    assert answer.status_code == 200
    deleted = answer.json()["deleted"]
    assert deleted["memories"] == 1 and deleted["entries"] == entries and deleted["index_rows"] == rows
    assert deleted["facts"] == facts and deleted["turns"] == memory.last_turn
    assert recall.search(memory_id=memory.id, query="Hotel Adler Innsbruck dentist") == []
    assert recall.count_rows(memory_id=memory.id) == 0
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories_recall WHERE memory_id = %s", [memory.id])
        assert cursor.fetchone()[0] == 0
    assert (
        cast.a.post(f"/v1/memories/{memory.id}/search", {"query": "hotel"}, format="json").status_code == 404
    )
    # The other memory is untouched and still findable.
    assert recall.search(memory_id=other.id, query="Hotel Adler")[0]["snippet"].startswith("I live in Oslo")
    assert cast.a.delete("/v1/memories?metadata.user=42").json()["deleted"]["memories"] == 0


def test_deleting_a_memory_removes_its_index_rows(memory, cast):
    assert cast.a.delete(f"/v1/memories/{memory.id}").status_code == 204
    assert recall.count_rows(memory_id=memory.id) == 0


def test_processing_is_pending_until_the_worker_has_run(cast):
    memory = cast.a.post("/v1/memories", {}, format="json").json()
    url = f"/v1/memories/{memory['id']}"
    cast.a.post(
        url + "/decorate", {"messages": [{"role": "user", "content": "I live in Oslo."}]}, format="json"
    )
    cast.a.post(url + "/report", {"messages": [{"role": "assistant", "content": "Nice!"}]}, format="json")
    assert cast.a.get(url).json()["processing"] == "pending"
    # Read-your-writes: the report is in the very next decorate, verbatim, before any processing.
    answer = cast.a.post(
        url + "/decorate", {"messages": [{"role": "user", "content": "Where do I live?"}]}, format="json"
    ).json()
    assert answer["messages"][:2] == [
        {"role": "user", "content": "I live in Oslo."},
        {"role": "assistant", "content": "Nice!"},
    ]
    drain()
    assert cast.a.get(url).json()["processing"] == "processed"
    assert cast.a.get(url).json()["counts"]["facts"] == 1


def test_compaction_folds_history_outside_the_window_into_the_summary(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    converse(
        memory,
        [["We booked the Hotel Adler in Innsbruck for March 3.", "Noted."]] + CORPUS["filler"] * 3,
        budget_tokens=200,
    )
    drain()
    memory.refresh_from_db()
    assert memory.summary and memory.summary_upto_seq > 0
    assert "Hotel Adler" in memory.summary or "turn" in memory.summary
    assert Entry.objects.filter(memory=memory).count() == memory.last_seq  # raw entries stay
    before = (memory.summary, memory.summary_upto_seq)
    assert memory_compact(memory_id=memory.id)["folded"] == 0  # idempotent
    memory.refresh_from_db()
    assert (memory.summary, memory.summary_upto_seq) == before
    answer = services.memory_decorate(
        memory=memory, messages=[{"role": "user", "content": "hi"}], budget_tokens=200, store=False
    )
    assert answer["context"]["summary"] == memory.summary
    assert "Summary of earlier conversation" in answer["instructions"]


def test_compaction_uses_the_model_when_one_is_configured(cast):
    from tests.fixtures.stubs import OpenAIStub, chat_reply, http_complete

    memory, _ = services.memory_create(project=cast.project_a)
    converse(memory, CORPUS["filler"] * 3, budget_tokens=200)
    with OpenAIStub(lambda body: (200, chat_reply("The user asked many general questions."))) as stub:
        result = memory_compact(memory_id=memory.id, complete=http_complete(stub.url))
    memory.refresh_from_db()
    assert result["folded"] > 0 and memory.summary == "The user asked many general questions."
    assert "Summary so far" in stub.requests[0]["body"]["messages"][1]["content"]


def test_retention_forgets_memories_unused_for_longer_than_the_project_allows(cast):
    project = cast.project_a
    project.retention_days = 30
    project.save()
    old, _ = services.memory_create(project=project)
    fresh, _ = services.memory_create(project=project)
    converse(old, [["I live in Oslo.", "ok"]])
    drain()
    Memory.objects.filter(pk=old.pk).update(last_used_at=timezone.now() - timedelta(days=31))
    kept, _ = services.memory_create(project=cast.project_b)
    Memory.objects.filter(pk=kept.pk).update(last_used_at=timezone.now() - timedelta(days=365))
    totals = services.retention_enforce()
    assert totals["memories"] == 1 and totals["index_rows"] == 2
    assert set(Memory.objects.values_list("id", flat=True)) >= {fresh.id, kept.id}
    assert not Memory.objects.filter(pk=old.pk).exists()
    assert recall.count_rows(memory_id=old.id) == 0


def test_retention_runs_on_the_beat_schedule(settings):
    assert settings.CELERY_BEAT_SCHEDULE["retention-sweep"]["task"] == "memories.tasks.retention_sweep"
    assert "outbox-sweep" in settings.CELERY_BEAT_SCHEDULE


def test_the_project_background_command_sets_model_and_retention(cast):
    from io import StringIO

    from django.core.management import call_command
    from django.core.management.base import CommandError

    out = StringIO()
    call_command(
        "project_background",
        "--project",
        cast.project_a.id,
        "--model",
        '{"provider": "openai", "model": "m", "baseUrl": "http://127.0.0.1:9/v1"}',
        "--retention-days",
        "30",
        stdout=out,
    )
    cast.project_a.refresh_from_db()
    assert cast.project_a.model_config["model"] == "m" and cast.project_a.retention_days == 30
    call_command("project_background", "--project", cast.project_a.id, "--no-model", stdout=out)
    cast.project_a.refresh_from_db()
    assert cast.project_a.model_config is None
    with pytest.raises(CommandError):
        call_command("project_background", "--project", cast.project_a.id, "--model", '{"model": "x"}')
