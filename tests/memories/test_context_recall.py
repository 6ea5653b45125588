"""decorate's recall block and the window around it (memories.context): the whole request fits the
budget, the window keeps the newest turns unless the question looks back (and then still the newest
exchange), a tool call stays with its result, no message is shown twice, recalled messages are shown
whole, the block takes more snippets when the question looks back and they fit, room the block
leaves goes back to the window, and the block lists what it recalls in the order it was said, each
day's date written once."""

from __future__ import annotations

import dataclasses
import re
from datetime import timedelta

import pytest

from common.tokens import message_tokens, text_tokens
from memories import context, services
from memories.models import Entry
from memories.selectors import memory_window, thread_view
from tests.fixtures.background import drain

BUDGETS = (150, 250, 400, 700, 1000, 1500, 2000, 3000, 5000)
LOOKS_BACK = "Which pier does the ferry to Hvar leave from?"  # answered only in the oldest turns
ABOUT_NOW = "Shall we book the table at Konoba Fetivi then?"  # about the newest turns


def _turn(memory, user: str, reply: str, tool: bool = False) -> None:
    services.memory_decorate(memory=memory, messages=[{"role": "user", "content": user}], budget_tokens=60000)
    messages = [{"role": "assistant", "content": reply}]
    if tool:
        call = {
            "id": f"call_{memory.last_seq}",
            "type": "function",
            "function": {"name": "lookup", "arguments": '{"q": "ferry"}'},
        }
        messages = [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call["id"], "content": "Timetable: 8:15, 12:15, 17:45."},
            *messages,
        ]
    services.report_accept(memory=memory, messages=messages, failures=[])
    memory.refresh_from_db()


@pytest.fixture
def memory(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    _turn(memory, "The ferry to Hvar leaves from pier 7 in Split, I checked twice.", "Pier 7, noted.")
    for i in range(36):
        _turn(
            memory,
            f"Ferry note {i}: the Hvar ferry was late again on day {i}, pier 7 was crowded.",
            "Sorry to hear that.",
            tool=i % 3 == 0,
        )
    for i in range(30):
        _turn(
            memory,
            f"Lunch plan {i}: soup, bread and a walk along the riva, nothing else to report.",
            "Sounds good.",
            tool=i % 7 == 0,
        )
    _turn(
        memory,
        "For dinner let's try Konoba Fetivi, the one with the grilled fish.",
        "Konoba Fetivi it is, I can book the table for eight.",
    )
    drain()
    memory.refresh_from_db()
    return memory


# The recall block's usual share whether or not the question looks back.
NO_LOOKBACK = dataclasses.replace(context.PARAMETERS, recall_lookback_share=context.PARAMETERS.recall_share)


def _ask(memory, text: str, budget: int, params: context.ContextParameters = context.PARAMETERS):
    return context.context_build(
        memory=memory,
        new_messages=[{"role": "user", "content": text}],
        budget_tokens=budget,
        before_seq=None,
        params=params,
    )


def _history(memory) -> list[tuple[int, str, str]]:
    """(seq, role, content) of every committed message, oldest first."""
    return list(
        memory.entries.filter(kind="message", committed=True)
        .order_by("seq")
        .values_list("seq", "role", "content")
    )


def _asked(memory):
    """(budget, question, context) for every budget and both questions."""
    return [
        (budget, question, _ask(memory, question, budget))
        for budget in BUDGETS
        for question in (LOOKS_BACK, ABOUT_NOW)
    ]


def test_the_window_the_blocks_and_the_new_message_fit_the_budget(memory):
    for budget, _, ctx in _asked(memory):
        used = sum(message_tokens(m) for m in ctx.messages) + text_tokens(ctx.context_text)
        assert used <= budget + 1, (
            budget
        )  # + the blocks' joining blank lines, which the parts' costs round into


def test_the_window_is_the_newest_history_starting_at_a_user_message(memory):
    stored = [(role, content) for _, role, content in _history(memory)]
    for budget, question, ctx in _asked(memory):
        history = ctx.messages[:-1]
        assert [(m["role"], m.get("content") or "") for m in history] == stored[len(stored) - len(history) :]
        if history:
            assert history[0]["role"] == "user", budget  # so a tool call is never split from its result
        assert ctx.messages[-1] == {"role": "user", "content": question}


def test_a_question_about_the_newest_turns_keeps_the_window_it_had(memory):
    new = message_tokens({"role": "user", "content": ABOUT_NOW})
    for budget in BUDGETS:
        ctx = _ask(memory, ABOUT_NOW, budget)
        usual = memory_window(
            memory_id=memory.id,
            before_seq=None,
            budget=budget,
            reserved=new + context.recall_token_cap(budget - new),
            new_has_user=True,
        )
        assert ctx.history_count >= len(usual.messages), budget


def test_a_question_that_looks_back_gives_the_recall_block_more_of_the_budget(memory):
    looking_back = _ask(memory, LOOKS_BACK, 1000)
    usual = _ask(memory, LOOKS_BACK, 1000, NO_LOOKBACK)
    assert len(looking_back.recalled) > len(usual.recalled)
    assert 0 < looking_back.history_count < usual.history_count  # the newest turns stay, fewer of them
    assert "pier 7 in Split" in looking_back.context_text


def test_a_new_thread_gives_the_recall_block_the_looking_back_share(memory):
    def ask(params):  # a dry run in a thread the memory has never seen: an empty window
        fresh = thread_view(memory=memory, name="fresh")
        return context.context_build(
            memory=memory,
            thread=fresh,
            new_messages=[{"role": "user", "content": LOOKS_BACK}],
            budget_tokens=1000,
            params=params,
        )

    looking_back = ask(context.PARAMETERS)
    usual = ask(NO_LOOKBACK)
    assert looking_back.history_count == 0
    assert len(looking_back.recalled) > len(usual.recalled)


def test_a_question_that_looks_back_still_shows_the_newest_exchange(memory):
    stored = [(role, content) for _, role, content in _history(memory)]
    newest = stored[-2:]  # "For dinner let's try Konoba Fetivi…" and its reply
    for budget in BUDGETS:
        ctx = _ask(memory, LOOKS_BACK, budget)
        assert [(m["role"], m["content"]) for m in ctx.messages[-3:-1]] == newest, budget
        if 250 <= budget <= 2000:  # the history does not fit whole: the block still recalls the answer
            assert "pier 7 in Split" in ctx.context_text, budget


def test_no_message_is_shown_twice(memory):
    seqs = [seq for seq, _, _ in _history(memory)]
    for budget, _, ctx in _asked(memory):
        recalled = [h["entry_id"] for h in ctx.recalled]
        assert len(recalled) == len(set(recalled))
        first_shown = seqs[len(seqs) - ctx.history_count] if ctx.history_count else memory.last_seq + 1
        assert all(h["seq"] < first_shown for h in ctx.recalled), budget  # the window shows the rest
        snippets = [h["snippet"] for h in ctx.recalled]
        assert len(snippets) == len(set(snippets))


def test_a_recalled_message_is_shown_whole(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    long = (
        "The ferry to Hvar leaves from pier 7 in Split. " + "We also talked about the islands, the weather "
        "and where to eat near the harbour afterwards. " * 8 + "Bring the booking code HV-2291 to the kiosk."
    )
    assert len(long) > 400
    _turn(memory, long, "Noted.")
    for i in range(60):
        _turn(memory, f"Lunch plan {i}: soup, bread and a walk along the riva.", "Sounds good.")
    drain()
    memory.refresh_from_db()
    ctx = _ask(memory, LOOKS_BACK, 500)
    assert ctx.recalled and ctx.recalled[0]["snippet"] == " ".join(long.split())
    assert "HV-2291" in ctx.context_text


def test_the_room_the_recall_block_leaves_goes_back_to_the_window(memory):
    ctx = _ask(memory, "Anything about xylophones?", 1000)  # nothing matches: no block
    assert ctx.recalled == [] and context.RECALL_HEADER not in ctx.context_text
    new = message_tokens({"role": "user", "content": "Anything about xylophones?"})
    whole = memory_window(memory_id=memory.id, before_seq=None, budget=1000, reserved=new, new_has_user=True)
    assert ctx.history_count == len(whole.messages)


def test_the_recall_block_takes_more_snippets_when_they_fit_and_score(memory):
    small, large = _ask(memory, LOOKS_BACK, 400), _ask(memory, LOOKS_BACK, 2000)
    assert 0 < len(small.recalled) < len(large.recalled)
    assert all(
        h["score"] >= large.recalled[0]["score"] * context.PARAMETERS.recall_min_relative
        for h in large.recalled
    )


@pytest.fixture
def days(cast):
    """A memory said over five days: the same topic every day, then filler (the newest turns)."""
    memory, _ = services.memory_create(project=cast.project_a)
    for day in range(5):
        _turn(
            memory,
            f"Day {day}: the ferry to Hvar left pier {day + 3} in Split, and the crossing took two hours.",
            f"Pier {day + 3}, noted for day {day}.",
        )
    for i in range(80):
        _turn(
            memory,
            f"Lunch plan {i}: soup, bread and a walk along the riva, nothing else to report.",
            "Sounds good.",
        )
    # Each day's turns written a day apart (before the worker indexes them, so the index has the dates too).
    start = memory.entries.order_by("seq").first().created_at - timedelta(days=10)
    for entry in memory.entries.filter(seq__lte=10):  # a user message and its reply per day
        Entry.objects.filter(pk=entry.pk).update(created_at=start + timedelta(days=(entry.seq - 1) // 2))
    drain()
    memory.refresh_from_db()
    return memory


def _block(ctx) -> list[str]:
    """The recall block's lines after its header."""
    text = ctx.context_text.split(context.RECALL_HEADER + "\n", 1)[1]
    return text.split("\n\n", 1)[0].split("\n")


def test_the_block_lists_what_it_recalls_in_the_order_said_under_one_heading_per_day(days):
    for budget in (300, 600, 1000, 2000):
        ctx = _ask(days, LOOKS_BACK, budget)
        shown = ctx.recalled
        assert len({h["date"] for h in shown}) >= 2, budget  # the fixture's ferry notes span five days
        lines, day, order = _block(ctx), None, []
        headings = [line[:-1] for line in lines if re.fullmatch(r"\d{4}-\d{2}-\d{2}:", line)]
        assert headings == sorted(set(headings)), budget  # each day once, oldest first
        assert set(headings) == {h["date"] for h in shown}, budget
        by_text = {f"- {h['role']}: {h['snippet']}": h for h in shown}
        for line in lines:
            if line[:-1] in headings:
                day = line[:-1]
                continue
            hit = by_text[line]  # every other line is one recalled message: role and its text
            assert hit["date"] == day, budget
            order.append(hit["seq"])
        assert order == sorted(order) and len(order) == len(shown), budget


def test_a_day_heading_is_paid_once(days):
    ctx = _ask(days, LOOKS_BACK, 2000)
    hits = context._recall_hits(days, LOOKS_BACK, None)
    _, text, used = context._recall_assemble(hits, 2000)
    lines = text.split("\n")
    assert used == sum(text_tokens(line) + 1 for line in lines)  # the header, each heading and each line once
    # The same messages with their date on every line would cost more, so fewer would fit.
    dated = sum(text_tokens(f"- [{line}]") + 3 for line in lines[1:] if not line.endswith(":"))
    assert used < text_tokens(context.RECALL_HEADER) + 1 + dated
    assert ctx.recalled
