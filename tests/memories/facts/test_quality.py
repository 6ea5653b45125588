"""Quality on the fixture corpus (tests/data/background_corpus.json): fact precision, recall, junk,
duplicates, nothing from assistant or system text, and recall@3 of the right snippet for
questions whose answers lie outside the window. The figures are printed (`pytest -s`)."""

from __future__ import annotations

import pytest

from memories import services
from memories.models import Entry, Fact
from projects import services as project_services
from tests.fixtures.background import CORPUS, converse, drain

RECALL_BUDGET = 400  # tokens: small enough that every question's answer is outside the window


def _matches(fact: Fact, expected: dict) -> bool:
    text = fact.text.lower()
    return fact.slot == expected["slot"] and all(word in text for word in expected["must"])


@pytest.fixture(scope="module")
def corpus_run(django_db_setup, django_db_blocker):
    """Every conversation played into its own memory, then 25 filler turns, all processed.
    Built once for the module (it is the slow part) and removed afterwards."""
    with django_db_blocker.unblock():
        project = project_services.project_create(name="Corpus")
        runs = []
        for conversation in CORPUS["conversations"]:
            memory, _ = services.memory_create(project=project, metadata={"corpus": conversation["id"]})
            converse(memory, conversation["turns"], instructions=conversation["instructions"])
            converse(memory, CORPUS["filler"])
            drain()
            memory.refresh_from_db()
            runs.append((conversation, memory))
    yield runs
    with django_db_blocker.unblock():
        for _, memory in runs:
            services.memory_delete(memory=memory)
        project.delete()


def test_fact_quality_on_the_corpus(db, corpus_run):
    expected_total = correct_active = active_total = all_total = junk = duplicates = 0
    found_expected = superseded_ok = superseded_total = 0
    from_non_user = forbidden_hits = 0
    problems = []
    for conversation, memory in corpus_run:
        facts = list(Fact.objects.filter(memory=memory))
        active = [f for f in facts if f.active]
        inactive = [f for f in facts if not f.active]
        expected, superseded = conversation["facts"], conversation["superseded"]
        expected_total += len(expected)
        active_total += len(active)
        all_total += len(facts)
        for fact in active:
            if any(_matches(fact, e) for e in expected):
                correct_active += 1
            else:
                problems.append(f"{conversation['id']}: unexpected active fact {fact.slot!r} {fact.text!r}")
        for fact in facts:
            if not any(_matches(fact, e) for e in expected + superseded):
                junk += 1
        for e in expected:
            if any(_matches(f, e) for f in active):
                found_expected += 1
            else:
                problems.append(f"{conversation['id']}: missed {e}")
        for e in superseded:
            superseded_total += 1
            old = [f for f in inactive if _matches(f, e)]
            if old and old[0].superseded_by_id and Fact.objects.get(pk=old[0].superseded_by_id).active:
                superseded_ok += 1
            else:
                problems.append(f"{conversation['id']}: not superseded {e}")
        seen_text, seen_slot = set(), set()
        for fact in active:
            single = fact.slot and not fact.slot.startswith(("allergy:", "pet:"))
            if fact.normalized in seen_text or (single and fact.slot in seen_slot):
                duplicates += 1
            seen_text.add(fact.normalized)
            if single:
                seen_slot.add(fact.slot)
        for fact in facts:
            roles = set(
                Entry.objects.filter(id__in=fact.source_entry_ids).values_list("kind", "role", "committed")
            )
            if not fact.source_entry_ids or roles != {("message", "user", True)}:
                from_non_user += 1
            if any(word in fact.text.lower() for word in conversation["forbidden"]):
                forbidden_hits += 1
                problems.append(f"{conversation['id']}: forbidden text in {fact.text!r}")
    precision = correct_active / active_total if active_total else 1.0
    recall = found_expected / expected_total
    junk_rate = junk / all_total if all_total else 0.0
    duplicate_rate = duplicates / active_total if active_total else 0.0
    print(
        f"\nFACTS: expected={expected_total} active={active_total} all={all_total} "
        f"precision={precision:.3f} recall={recall:.3f} junk_rate={junk_rate:.3f} "
        f"duplicate_rate={duplicate_rate:.3f} superseded={superseded_ok}/{superseded_total} "
        f"from_assistant_or_system={from_non_user} forbidden={forbidden_hits}"
    )
    for line in problems:
        print("  ", line)
    assert precision >= 0.95
    assert recall >= 0.85
    assert junk_rate <= 0.05
    assert duplicates == 0
    assert from_non_user == 0 and forbidden_hits == 0
    assert superseded_ok == superseded_total


def test_recall_at_3_for_answers_outside_the_window(db, corpus_run):
    hits = total = 0
    misses = []
    for conversation, memory in corpus_run:
        for question in conversation["questions"]:
            total += 1
            answer = services.memory_decorate(
                memory=memory,
                messages=[{"role": "user", "content": question["ask"]}],
                budget_tokens=RECALL_BUDGET,
                store=False,
            )
            window_text = " ".join(str(m["content"]) for m in answer["messages"])
            assert question["expect"].lower() not in window_text.lower(), (
                "the answer must lie outside the window"
            )
            top3 = [hit["snippet"].lower() for hit in answer["context"]["recalled"][:3]]
            if any(question["expect"].lower() in snippet for snippet in top3):
                hits += 1
                assert question["expect"].lower() in answer["instructions"].lower()
            else:
                misses.append((conversation["id"], question["ask"], top3))
    recall_at_3 = hits / total
    print(f"\nRECALL@3: {hits}/{total} = {recall_at_3:.3f}")
    for miss in misses:
        print("   miss:", miss)
    assert recall_at_3 >= 0.85


def test_a_second_run_of_every_outbox_row_changes_nothing(db, corpus_run):
    from memories.background import process_entries

    mine = Fact.objects.filter(memory__in=[m for _, m in corpus_run])
    before = sorted(mine.values_list("id", "text", "active", "source_entry_ids"))
    for _, memory in corpus_run:
        result = process_entries(memory_id=memory.id, from_seq=1, to_seq=memory.last_seq)
        assert result["facts"]["created"] == 0 and result["facts"]["superseded"] == 0
    assert sorted(mine.values_list("id", "text", "active", "source_entry_ids")) == before
