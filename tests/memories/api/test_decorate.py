"""POST /v1/memories/{id}/decorate (SPEC 4.3 and 4.7)."""

from __future__ import annotations

import pytest
from threadless.window import message_tokens

from memories import services
from memories.context import FACTS_HEADER, FAILURES_HEADER, PARAMETERS
from memories.models import Entry, Memory
from tests.fixtures.api import decorate, error_of, post, report

DIGEST_POLICY = {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}}


def entries(memory, **filters):
    return list(Entry.objects.filter(memory=memory, **filters).order_by("seq"))


def test_decorate_stores_the_new_messages_committed_before_answering(cast, memory_a):
    answer = decorate(cast.a, memory_a.id, [{"role": "user", "content": "I have a beagle."}])
    assert answer.status_code == 200
    body = answer.json()
    assert body["memory_id"] == memory_a.id
    assert body["turn"] == 1
    stored = entries(memory_a)
    assert [(e.kind, e.role, e.content, e.committed, e.turn, e.seq) for e in stored] == [
        ("message", "user", "I have a beagle.", True, 1, 1)
    ]
    assert stored[0].tokens == message_tokens({"content": "I have a beagle."})
    assert body["messages"] == [{"role": "user", "content": "I have a beagle."}]


def test_each_user_message_opens_a_turn_and_history_comes_before_the_new_messages(cast, memory_a):
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "one"}])
    report(cast.a, memory_a.id, [{"role": "assistant", "content": "first reply"}])
    body = decorate(cast.a, memory_a.id, [{"role": "user", "content": "two"}]).json()
    assert body["turn"] == 2
    assert body["messages"] == [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "first reply"},
        {"role": "user", "content": "two"},
    ]
    assert [e.turn for e in entries(memory_a)] == [1, 1, 2]


def test_the_answer_has_every_documented_field(cast, memory_a):
    body = decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}], instructions="Be brief.").json()
    assert set(body) == {"memory_id", "turn", "instructions", "context_text", "messages", "context", "usage"}
    assert set(body["context"]) == {"facts", "recalled", "digests", "summary"}
    assert set(body["usage"]) == {
        "instructions_tokens",
        "history_tokens",
        "new_tokens",
        "dropped_messages",
        "recalled",
    }


def test_without_context_the_instructions_are_the_callers_alone(cast, memory_a):
    body = decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}], instructions="Be brief.").json()
    assert body["context_text"] == ""
    assert body["instructions"] == "Be brief."
    assert FACTS_HEADER not in body["instructions"]


def test_the_instructions_are_the_callers_then_two_newlines_then_the_context_text(cast, memory_a):
    services.fact_create(memory=memory_a, text="Has a beagle called Biscuit")
    body = decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}], instructions="Be brief.").json()
    assert body["context_text"].startswith(FACTS_HEADER)
    assert "- Has a beagle called Biscuit" in body["context_text"]
    assert body["instructions"] == "Be brief." + "\n\n" + body["context_text"]


def test_with_empty_own_instructions_the_answer_is_just_the_context_text(cast, memory_a):
    services.fact_create(memory=memory_a, text="Likes tea")
    body = decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}], instructions="").json()
    assert body["instructions"] == body["context_text"] != ""


def test_system_messages_set_the_instructions_joined_and_are_neither_stored_nor_returned(cast, memory_a):
    body = decorate(
        cast.a,
        memory_a.id,
        [
            {"role": "system", "content": "You are terse."},
            {"role": "system", "content": [{"type": "text", "text": "Answer in French."}]},
            {"role": "user", "content": "hi"},
        ],
    ).json()
    assert body["instructions"] == "You are terse.\n\nAnswer in French."
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert [e.role for e in entries(memory_a)] == ["user"]
    memory_a.refresh_from_db()
    assert memory_a.instructions == "You are terse.\n\nAnswer in French."


def test_an_explicit_instructions_wins_over_system_messages(cast, memory_a):
    body = decorate(
        cast.a,
        memory_a.id,
        [{"role": "system", "content": "ignored"}, {"role": "user", "content": "hi"}],
        instructions="Explicit.",
    ).json()
    assert body["instructions"] == "Explicit."
    assert body["messages"] == [{"role": "user", "content": "hi"}]


def test_without_instructions_decorate_uses_the_memorys_latest(cast, memory_a):
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "one"}], instructions="Be kind.")
    body = decorate(cast.a, memory_a.id, [{"role": "user", "content": "two"}]).json()
    assert body["instructions"] == "Be kind."
    created = post(cast.a, "/v1/memories", {"instructions": "From creation."}).json()
    assert (
        decorate(cast.a, created["id"], [{"role": "user", "content": "x"}]).json()["instructions"]
        == "From creation."
    )


def test_store_false_changes_nothing_not_even_the_instructions(cast, memory_a):
    decorate(
        cast.a,
        memory_a.id,
        [{"role": "user", "content": "one"}],
        instructions="Original.",
        budget_tokens=5000,
    )
    memory_a.refresh_from_db()
    before = (
        memory_a.instructions,
        memory_a.last_seq,
        memory_a.last_turn,
        memory_a.message_count,
        memory_a.last_budget_tokens,
        memory_a.updated_at,
    )
    body = decorate(
        cast.a,
        memory_a.id,
        [{"role": "system", "content": "Dry run."}, {"role": "user", "content": "two"}],
        store=False,
        budget_tokens=100,
    ).json()
    assert body["instructions"] == "Dry run."
    assert body["messages"] == [{"role": "user", "content": "one"}, {"role": "user", "content": "two"}]
    assert body["turn"] == 2
    memory_a.refresh_from_db()
    assert (
        memory_a.instructions,
        memory_a.last_seq,
        memory_a.last_turn,
        memory_a.message_count,
        memory_a.last_budget_tokens,
        memory_a.updated_at,
    ) == before
    assert len(entries(memory_a)) == 1


def test_the_history_window_fits_the_budget_and_starts_at_a_user_message(cast, memory_a):
    for i in range(6):
        decorate(cast.a, memory_a.id, [{"role": "user", "content": f"question {i} " + "x" * 40}])
        report(cast.a, memory_a.id, [{"role": "assistant", "content": f"answer {i} " + "y" * 40}])
    new = [{"role": "user", "content": "latest"}]
    cost = message_tokens(new[0])
    one = message_tokens({"content": "question 0 " + "x" * 40})
    budget = cost + 2 * (one + one) + 3  # room for two whole turns and a bit
    body = decorate(cast.a, memory_a.id, new, budget_tokens=budget, store=False).json()
    history = body["messages"][:-1]
    assert history[0]["role"] == "user"
    assert [m["content"].split(" ")[:2] for m in history] == [
        ["question", "4"],
        ["answer", "4"],
        ["question", "5"],
        ["answer", "5"],
    ]
    assert body["usage"]["history_tokens"] == sum(message_tokens(m) for m in history)
    assert body["usage"]["history_tokens"] + body["usage"]["new_tokens"] <= budget
    assert body["usage"]["new_tokens"] == cost
    assert body["usage"]["dropped_messages"] == 8


def test_a_tool_call_and_its_result_stay_together_in_the_window(cast, memory_a):
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "weather?"}])
    call = [{"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}]
    report(
        cast.a,
        memory_a.id,
        [
            {"role": "assistant", "content": "", "tool_calls": call},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny " * 50},
            {"role": "assistant", "content": "It is sunny."},
        ],
    )
    # Budget for the reply and the tool result but not the whole turn: the turn goes whole or not at all.
    tail = message_tokens({"content": "It is sunny."}) + message_tokens({"content": "sunny " * 50})
    new = [{"role": "user", "content": "thanks"}]
    body = decorate(
        cast.a, memory_a.id, new, budget_tokens=tail + message_tokens(new[0]) + 2, store=False
    ).json()
    assert body["messages"] == new


def test_when_not_even_one_turn_fits_the_newest_user_message_onward_is_kept_for_a_tool_result(cast, memory_a):
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "long " * 400}])
    call = [{"id": "call_9", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    report(cast.a, memory_a.id, [{"role": "assistant", "content": "", "tool_calls": call}])
    new = [{"role": "tool", "tool_call_id": "call_9", "content": "42"}]
    body = decorate(cast.a, memory_a.id, new, budget_tokens=50).json()
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool"]


def test_blocks_appear_only_when_not_empty(cast, memory_a):
    body = decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}]).json()
    assert body["context_text"] == ""
    assert body["context"] == {"facts": [], "recalled": [], "digests": [], "summary": ""}


def test_the_facts_block_lists_the_newest_facts_first(cast, memory_a):
    services.fact_create(memory=memory_a, text="Old fact")
    services.fact_create(memory=memory_a, text="Middle fact")
    services.fact_create(memory=memory_a, text="New fact")
    body = decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}]).json()
    assert [f["text"] for f in body["context"]["facts"]] == ["New fact", "Middle fact", "Old fact"]
    assert body["context_text"] == FACTS_HEADER + "\n- New fact\n- Middle fact\n- Old fact"


def test_the_facts_block_stops_at_1000_tokens(cast, memory_a):
    for i in range(40):
        services.fact_create(memory=memory_a, text=f"Fact number {i} " + "z" * 400)
    body = decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}]).json()
    facts = body["context"]["facts"]
    assert 0 < len(facts) < 40
    assert facts[0]["text"].startswith("Fact number 39 ")
    block = body["context_text"]
    assert (len(block) - len(FACTS_HEADER)) / 4 <= PARAMETERS.facts_token_cap + 4 * len(facts)


def _failure(client, memory_id, task_id="weather", error="HTTP 503 from https://wx.example.com", output=None):
    failure = {"task_id": task_id, "error": error}
    if output is not None:
        failure["output"] = output
    return report(client, memory_id, [], failures=[failure])


def test_the_failures_block_shows_the_committed_digest_but_not_the_uncommitted_raw_error(cast, memory_a):
    services.memory_update(memory=memory_a, policy=DIGEST_POLICY)
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "weather?"}])
    _failure(cast.a, memory_a.id, output={"raw": "secret-ish body"})
    body = decorate(cast.a, memory_a.id, [{"role": "user", "content": "and now?"}]).json()
    assert body["context"]["digests"] == [
        {
            "type": "errorDigest",
            "taskId": "weather",
            "turn": 1,
            "text": "Task 'weather' failed: HTTP 503 from [url]",
        }
    ]
    assert body["context_text"] == FAILURES_HEADER + "\n- (turn 1) Task 'weather' failed: HTTP 503 from [url]"
    assert "wx.example.com" not in body["instructions"]
    assert "secret-ish" not in body["instructions"]


def test_with_the_policy_off_the_committed_raw_error_is_what_the_failures_block_shows(cast, memory_a):
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "weather?"}])
    _failure(cast.a, memory_a.id)
    body = decorate(cast.a, memory_a.id, [{"role": "user", "content": "and now?"}]).json()
    assert body["context"]["digests"] == []
    assert "task 'weather' error: HTTP 503 from https://wx.example.com" in body["context_text"]


@pytest.mark.parametrize("mode", ["exclude_all"])
def test_with_exclude_all_the_failures_block_is_absent(cast, memory_a, mode):
    services.memory_update(
        memory=memory_a, policy={"strictWriteDiscipline": {"enabled": True, "onFailure": mode}}
    )
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "weather?"}])
    _failure(cast.a, memory_a.id)
    body = decorate(cast.a, memory_a.id, [{"role": "user", "content": "and now?"}]).json()
    assert body["context_text"] == ""


def test_failures_of_turns_outside_the_window_are_not_shown(cast, memory_a):
    services.memory_update(memory=memory_a, policy=DIGEST_POLICY)
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "weather?"}])
    _failure(cast.a, memory_a.id)
    for i in range(3):
        decorate(cast.a, memory_a.id, [{"role": "user", "content": f"later {i} " + "w" * 200}])
    new = [{"role": "user", "content": "now"}]
    body = decorate(cast.a, memory_a.id, new, budget_tokens=message_tokens(new[0]) + 10, store=False).json()
    assert body["messages"] == new
    assert body["context"]["digests"] == []
    wide = decorate(cast.a, memory_a.id, new, budget_tokens=60000, store=False).json()
    assert [d["turn"] for d in wide["context"]["digests"]] == [1]


def test_the_new_turns_own_failures_show_even_with_no_history(cast, memory_a):
    services.memory_update(memory=memory_a, policy=DIGEST_POLICY)
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "q " * 300}])
    _failure(cast.a, memory_a.id)
    new = [{"role": "tool", "tool_call_id": "c", "content": "x"}]
    body = decorate(cast.a, memory_a.id, new, budget_tokens=20, store=False).json()
    assert [d["taskId"] for d in body["context"]["digests"]] == ["weather"]


def test_usage_counts_the_instructions_as_sent(cast, memory_a):
    services.fact_create(memory=memory_a, text="Likes tea")
    body = decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}], instructions="Be brief.").json()
    assert body["usage"]["instructions_tokens"] == message_tokens({"content": body["instructions"]}) - 4
    assert body["usage"]["recalled"] == 0


def test_an_idempotency_key_replays_the_first_answer_and_stores_once(cast, memory_a):
    first = decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}])
    assert first.status_code == 200
    once = post(
        cast.a,
        f"/v1/memories/{memory_a.id}/decorate",
        {"messages": [{"role": "user", "content": "again"}]},
        **{"Idempotency-Key": "retry-1"},
    )
    twice = post(
        cast.a,
        f"/v1/memories/{memory_a.id}/decorate",
        {"messages": [{"role": "user", "content": "again"}]},
        **{"Idempotency-Key": "retry-1"},
    )
    assert once.status_code == twice.status_code == 200
    assert once.content == twice.content
    assert [e.content for e in entries(memory_a)] == ["hi", "again"]
    other = post(
        cast.a,
        f"/v1/memories/{memory_a.id}/decorate",
        {"messages": [{"role": "user", "content": "again"}]},
        **{"Idempotency-Key": "retry-2"},
    )
    assert other.json()["turn"] == 3


@pytest.mark.parametrize("budget", [0, -5, "many", True, 1.5, 2_000_001, None])
def test_a_bad_budget_is_a_400_naming_budget_tokens(cast, memory_a, budget):
    error = error_of(
        decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}], budget_tokens=budget),
        400,
        "invalid_request",
    )
    assert error["message"].startswith("budget_tokens")
    assert entries(memory_a) == []


@pytest.mark.parametrize("field,value", [("store", "yes"), ("recall", 1), ("instructions", 5)])
def test_a_bad_flag_or_instructions_is_a_400_naming_it(cast, memory_a, field, value):
    error = error_of(
        decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}], **{field: value}),
        400,
        "invalid_request",
    )
    assert error["message"].startswith(field)


@pytest.mark.parametrize(
    "message,field",
    [
        ({"role": "user"}, None),
        ({"role": "user", "content": 5}, "messages[0].content"),
        ({"role": "user", "content": [{"text": "no type"}]}, "messages[0].content[0]"),
        ({"role": "user", "content": [{"type": "text", "text": 3}]}, "messages[0].content[0].text"),
        ({"role": "tool", "content": "x"}, "messages[0].tool_call_id"),
        ({"role": "user", "content": "x", "tool_calls": []}, "messages[0].tool_calls"),
        ({"role": "user", "content": "x", "mood": "happy"}, "messages[0].mood"),
        ("hello", "messages[0]"),
    ],
)
def test_a_bad_message_is_a_400_naming_its_path(cast, memory_a, message, field):
    response = decorate(cast.a, memory_a.id, [message])
    if field is None:  # content may be absent: an empty message
        assert response.status_code == 200
        return
    assert error_of(response, 400, "invalid_request")["message"].startswith(field)


def test_content_parts_are_stored_and_passed_through_and_an_image_counts_256(cast, memory_a):
    parts = [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ]
    body = decorate(cast.a, memory_a.id, [{"role": "user", "content": parts}]).json()
    assert body["messages"] == [{"role": "user", "content": parts}]
    assert body["usage"]["new_tokens"] == (len("What is in this picture?") + 3) // 4 + 256 + 4
    stored = entries(memory_a)[0]
    assert stored.parts == parts and stored.tokens == body["usage"]["new_tokens"]
    later = decorate(cast.a, memory_a.id, [{"role": "user", "content": "and?"}]).json()
    assert later["messages"][0] == {"role": "user", "content": parts}


def test_decorate_records_the_budget_it_was_last_used_with(cast, memory_a):
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}], budget_tokens=12345)
    assert Memory.objects.get(pk=memory_a.pk).last_budget_tokens == 12345


def test_a_decorate_without_messages_is_a_400_naming_messages_and_stores_nothing(cast, memory_a):
    """A body without messages (`{}`) is refused, not answered 200 with an empty turn."""
    for body in ({}, {"messages": None}, {"instructions": "Be brief."}):
        error = error_of(post(cast.a, f"/v1/memories/{memory_a.id}/decorate", body), 400, "invalid_request")
        assert error["message"].startswith("messages: is required")
    assert entries(memory_a) == []
    memory_a.refresh_from_db()
    assert memory_a.instructions == "" and memory_a.last_turn == 0
    # An explicit empty list still builds the request from memory alone.
    assert decorate(cast.a, memory_a.id, []).status_code == 200
