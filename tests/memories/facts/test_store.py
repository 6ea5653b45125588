"""Fact extraction: only from committed user messages, no duplicates, newer statements supersede,
people's edits and deletes win, and the LLM extractor (against a real local HTTP stub)."""

from __future__ import annotations

import importlib.util
import json

import pytest
from django.db import transaction

from memories import services
from memories.background import extract_facts, process_entries
from memories.context import context_build
from memories.facts import UserMessage
from memories.models import Fact, FactTombstone
from tests.fixtures.background import converse, drain
from tests.fixtures.stubs import OpenAIStub, chat_reply, http_complete


@pytest.fixture
def memory(cast):
    memory, _ = services.memory_create(project=cast.project_a, metadata={"user": "42"})
    return memory


def active(memory) -> list[str]:
    return sorted(Fact.objects.filter(memory=memory, active=True).values_list("text", flat=True))


def test_facts_come_only_from_committed_user_messages(memory):
    services.memory_decorate(
        memory=memory,
        instructions="My name is Bob and I live in Madrid.",
        messages=[
            {"role": "system", "content": "I'm allergic to shellfish."},
            {"role": "user", "content": "I live in Oslo."},
        ],
    )
    services.report_accept(
        memory=memory,
        messages=[
            {"role": "assistant", "content": "I live in Rome and my name is Assistant."},
            {"role": "tool", "content": "My name is Tool.", "tool_call_id": "call_1"},
        ],
        failures=services.validate_failures([{"task_id": "lookup", "error": "I am allergic to timeouts"}]),
    )
    with transaction.atomic():
        locked = services.memory_lock(memory)
        services.entries_append(
            memory=locked,
            items=[
                {"kind": "message", "role": "user", "content": "I'm allergic to cats.", "committed": False},
                {"kind": "digest", "content": "My name is Digest.", "committed": True},
            ],
        )
    drain()
    assert active(memory) == ["User lives in Oslo"]


def test_a_newer_statement_supersedes_the_old_one_which_the_model_no_longer_sees(memory, cast):
    converse(memory, [["I live in Paris.", "Nice."], ["I moved to Berlin last month.", "Congrats!"]])
    drain()
    old = Fact.objects.get(memory=memory, text="User lives in Paris")
    new = Fact.objects.get(memory=memory, text="User lives in Berlin")
    assert (old.active, old.superseded_by_id, new.active) == (False, new.id, True)
    ctx = context_build(memory=memory, new_messages=[{"role": "user", "content": "hi"}], budget_tokens=1000)
    assert "User lives in Berlin" in ctx.context_text and "Paris" not in ctx.context_text.split("Recalled")[0]
    listed = cast.a.get(f"/v1/memories/{memory.id}/facts").json()["data"]
    assert [f["text"] for f in listed] == ["User lives in Berlin"]
    assert (
        listed[0]["extractor"] == "rules"
        and listed[0]["slot"] == "location"
        and listed[0]["source_entry_ids"]
    )
    history = cast.a.get(f"/v1/memories/{memory.id}/facts?include_history=true").json()["data"]
    assert sorted(f["text"] for f in history) == ["User lives in Berlin", "User lives in Paris"]


def test_saying_the_same_thing_again_adds_provenance_not_a_duplicate(memory):
    converse(
        memory,
        [
            ["I love hiking.", "Great."],
            ["Did I mention I love hiking?", "Yes."],
            ["Also, I love hiking.", "You said!"],
        ],
    )
    drain()
    facts = list(Fact.objects.filter(memory=memory))
    assert [f.text for f in facts] == ["User likes hiking"]
    assert len(facts[0].source_entry_ids) == 2  # the question is not a statement


def test_moving_back_brings_the_old_fact_back_without_a_duplicate(memory):
    converse(
        memory, [["I live in Paris.", "ok"], ["I moved to Berlin.", "ok"], ["I just moved to Paris.", "ok"]]
    )
    drain()
    assert active(memory) == ["User lives in Paris"]
    assert Fact.objects.filter(memory=memory).count() == 2


def test_a_rerun_of_old_turns_never_undoes_a_newer_statement(memory):
    converse(memory, [["I live in Paris.", "ok"], ["I moved to Berlin.", "ok"]])
    drain()
    process_entries(memory_id=memory.id, from_seq=1, to_seq=2)  # a stale re-run of the first turn
    assert active(memory) == ["User lives in Berlin"]


def test_a_deleted_fact_is_not_re_added_by_extraction(memory, cast):
    converse(memory, [["I'm allergic to peanuts.", "noted"]])
    drain()
    fact = Fact.objects.get(memory=memory)
    assert cast.a.delete(f"/v1/memories/{memory.id}/facts/{fact.id}").status_code == 204
    assert FactTombstone.objects.filter(memory=memory).count() == 1
    process_entries(memory_id=memory.id, from_seq=1, to_seq=memory.last_seq)
    converse(memory, [["As I said, I'm allergic to peanuts.", "ok"]])
    drain()
    assert active(memory) == []


def test_a_person_edit_wins_over_extraction_until_the_user_says_something_newer(memory, cast):
    converse(memory, [["I live in Berlin.", "ok"]])
    drain()
    fact = Fact.objects.get(memory=memory)
    answer = cast.a.patch(
        f"/v1/memories/{memory.id}/facts/{fact.id}", {"text": "User lives in Potsdam"}, format="json"
    )
    assert answer.status_code == 200 and answer.json()["extractor"] == "api"
    process_entries(memory_id=memory.id, from_seq=1, to_seq=memory.last_seq)
    assert active(memory) == ["User lives in Potsdam"]
    converse(memory, [["I moved to Hamburg.", "ok"]])
    drain()
    assert active(memory) == ["User lives in Hamburg"]


def test_a_fact_added_through_the_api_is_never_touched_by_extraction(memory, cast):
    cast.a.post(f"/v1/memories/{memory.id}/facts", {"text": "User likes hiking"}, format="json")
    converse(memory, [["I love hiking.", "ok"]])
    drain()
    fact = Fact.objects.get(memory=memory)
    assert (fact.extractor, fact.source_entry_ids) == ("api", [])


@pytest.mark.parametrize("extractor", ["imported:api", "imported:console"])
def test_a_persons_fact_brought_by_an_import_is_still_never_touched_by_extraction(memory, extractor):
    Fact.objects.create(
        memory=memory, text="User likes hiking", normalized="user likes hiking", extractor=extractor
    )
    converse(memory, [["I love hiking.", "ok"]])
    drain()
    fact = Fact.objects.get(memory=memory)
    assert (fact.extractor, fact.source_entry_ids) == (extractor, [])


def test_deleting_a_fact_also_forgets_the_history_it_replaced(memory, cast):
    converse(memory, [["I live in Paris.", "ok"], ["I moved to Berlin.", "ok"]])
    drain()
    current = Fact.objects.get(memory=memory, active=True)
    assert cast.a.delete(f"/v1/memories/{memory.id}/facts/{current.id}").status_code == 204
    assert Fact.objects.filter(memory=memory).count() == 0
    process_entries(memory_id=memory.id, from_seq=1, to_seq=memory.last_seq)
    assert Fact.objects.filter(memory=memory).count() == 0


# --- the LLM extractor, against a real local HTTP server ---------------------------------------


def _messages(memory) -> list[UserMessage]:
    from memories.models import Entry

    return [
        UserMessage(entry_id=e.id, seq=e.seq, text=e.content)
        for e in Entry.objects.filter(memory=memory, role="user").order_by("seq")
    ]


def test_the_llm_extractor_asks_about_user_messages_only_and_keeps_what_it_can_trust(memory):
    converse(
        memory,
        [
            ["I'm Dana and I live in Lisbon.", "I live in the cloud, Dana."],
            ["Remember my sister Ana visits on Friday.", "Noted!"],
        ],
    )
    answer = {
        "facts": [
            {"text": "User's name is Dana", "slot": "name", "source": [1], "confidence": 0.95},
            {"text": "User lives in Lisbon", "slot": "Location", "source": [1], "confidence": 0.9},
            {"text": "User's sister Ana visits on Friday", "slot": "", "source": [2], "confidence": 0.8},
            {"text": "User is unsure about something", "slot": "", "source": [2], "confidence": 0.2},
            {"text": "User invented fact", "slot": "", "source": [7], "confidence": 0.9},
        ]
    }
    with OpenAIStub(lambda body: (200, chat_reply("```json\n" + json.dumps(answer) + "\n```"))) as stub:
        counts = extract_facts(memory=memory, messages=_messages(memory), complete=http_complete(stub.url))
    assert counts["extractor"] == "llm" and counts["created"] == 3
    prompt = json.dumps(stub.requests[0]["body"]["messages"])
    assert "Lisbon" in prompt and "the cloud" not in prompt and "Noted" not in prompt
    facts = {f.text: f for f in Fact.objects.filter(memory=memory)}
    assert sorted(facts) == [
        "User lives in Lisbon",
        "User's name is Dana",
        "User's sister Ana visits on Friday",
    ]
    assert (
        facts["User lives in Lisbon"].slot == "location" and facts["User lives in Lisbon"].extractor == "llm"
    )


def test_when_the_model_fails_the_rules_extract_instead(memory):
    converse(memory, [["I live in Lisbon.", "ok"]])
    with OpenAIStub(lambda body: (500, {"error": {"message": "overloaded"}})) as stub:
        counts = extract_facts(memory=memory, messages=_messages(memory), complete=http_complete(stub.url))
    assert counts["extractor"] == "rules" and active(memory) == ["User lives in Lisbon"]
    with OpenAIStub(lambda body: (200, chat_reply("I cannot help with that."))) as stub:
        converse(memory, [["I'm allergic to latex.", "ok"]])
        counts = extract_facts(memory=memory, messages=_messages(memory), complete=http_complete(stub.url))
    assert counts["extractor"] == "rules" and "User is allergic to latex" in active(memory)


def test_without_a_model_configured_the_rules_are_used(memory):
    from memories.facts.llm import complete_for_project

    assert complete_for_project(memory.project) is None


@pytest.mark.skipif(importlib.util.find_spec("providers") is None, reason="providers not merged yet")
def test_a_configured_project_model_extracts_through_the_shared_provider_clients(memory, settings):
    converse(memory, [["I live in Lisbon.", "ok"]])
    answer = {
        "facts": [{"text": "User lives in Lisbon", "slot": "location", "source": [1], "confidence": 0.9}]
    }
    with OpenAIStub(lambda body: (200, chat_reply(json.dumps(answer)))) as stub:
        settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1"]
        memory.project.model_config = {"provider": "openai", "model": "stub-model", "baseUrl": stub.url}
        memory.project.save()
        drain()
    assert stub.requests and stub.requests[0]["body"]["model"] == "stub-model"
    assert Fact.objects.get(memory=memory).extractor == "llm"
