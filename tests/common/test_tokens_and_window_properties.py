"""Property tests of the one token estimate and window rule (sdk/python/threadless/window.py).

A brute-force reading of SPEC 4.3 is the oracle: the window is the longest suffix of the
history that starts at a user message and fits the budget together with the new messages; if
none fits and the new messages hold no user message, it is the newest user message onward.
"""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st
from threadless.window import NON_TEXT_PART_TOKENS, WindowFitter, fit_window, message_tokens, text_quarters

texts = st.text(max_size=60)


def reference_quarters(text: str) -> int:
    return sum(1 if ord(ch) < 0x3000 else 4 for ch in text)


@st.composite
def turns(draw):
    """One turn: a user message, then replies, tool calls and their results."""
    out = [{"role": "user", "content": draw(texts)}]
    for i in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            call_id = f"call_{draw(st.integers(0, 10**6))}_{i}"
            out.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "lookup", "arguments": draw(texts)},
                        }
                    ],
                }
            )
            out.append({"role": "tool", "tool_call_id": call_id, "content": draw(texts)})
        out.append({"role": "assistant", "content": draw(texts)})
    return out


@st.composite
def conversations(draw):
    history = [m for turn in draw(st.lists(turns(), max_size=8)) for m in turn]
    if history and draw(st.booleans()):
        # A history may begin mid-turn (older turns compacted away).
        history = history[draw(st.integers(0, len(history) - 1)) :]
    new = draw(
        st.sampled_from(
            [
                [{"role": "user", "content": draw(texts)}],
                [{"role": "tool", "tool_call_id": "call_x", "content": draw(texts)}],
                [],
            ]
        )
    )
    budget = draw(st.integers(1, 400))
    return history, new, budget


def reference_start(history, new, budget) -> int:
    reserved = sum(message_tokens(m) for m in new)
    for start in range(len(history) + 1):
        if start < len(history) and history[start]["role"] != "user":
            continue
        if start == len(history) or sum(message_tokens(m) for m in history[start:]) + reserved <= budget:
            if start < len(history):
                return start
            break
    users = [i for i, m in enumerate(history) if m["role"] == "user"]
    if users and not any(m["role"] == "user" for m in new):
        return users[-1]
    return len(history)


@settings(max_examples=400, deadline=None)
@given(conversations())
def test_the_window_is_the_longest_user_started_suffix_that_fits(case):
    history, new, budget = case
    assert fit_window(history, new, budget) == reference_start(history, new, budget)


@settings(max_examples=300, deadline=None)
@given(conversations())
def test_the_window_starts_at_a_user_message_or_is_empty(case):
    history, new, budget = case
    start = fit_window(history, new, budget)
    assert start == len(history) or history[start]["role"] == "user"


@settings(max_examples=300, deadline=None)
@given(conversations())
def test_the_window_fits_the_budget_unless_only_the_oversized_turn_rule_applies(case):
    history, new, budget = case
    start = fit_window(history, new, budget)
    window = history[start:]
    cost = sum(message_tokens(m) for m in window + new)
    if cost > budget and window:
        # The oversized-turn rule: only when nothing fits and the new messages hold no user
        # message; then the window is exactly the newest user message onward.
        assert not any(m["role"] == "user" for m in new)
        newest_user = max(i for i, m in enumerate(history) if m["role"] == "user")
        assert start == newest_user
        assert not any(
            sum(message_tokens(m) for m in history[i:]) + sum(message_tokens(m) for m in new) <= budget
            for i, m in enumerate(history)
            if m["role"] == "user"
        )


@settings(max_examples=300, deadline=None)
@given(conversations())
def test_a_tool_call_is_never_separated_from_its_result(case):
    history, new, budget = case
    window = history[fit_window(history, new, budget) :]
    called = {c["id"] for m in window for c in m.get("tool_calls") or []}
    answered = {m["tool_call_id"] for m in window if m["role"] == "tool"}
    all_called = {c["id"] for m in history for c in m.get("tool_calls") or []}
    # Every result in the window has its call in the window (when the call is in the history).
    assert answered & all_called <= called
    # Every call in the window has its result in the window.
    all_answered = {m["tool_call_id"] for m in history if m["role"] == "tool"}
    assert called & all_answered <= answered


@settings(max_examples=200, deadline=None)
@given(conversations())
def test_the_streaming_fitter_stops_at_the_first_message_over_budget_once_a_turn_fits(case):
    """Fed newest first (as rows come off the index), it reads O(window) rows, never the rest."""
    history, new, budget = case
    reserved = sum(message_tokens(m) for m in new)
    new_has_user = any(m["role"] == "user" for m in new)
    fitter = WindowFitter(budget, reserved, new_has_user)
    fed = 0
    for message in reversed(history):
        fed += 1
        if not fitter.push(message_tokens(message), message["role"]):
            break
    assert len(history) - fitter.result() == fit_window(history, new, budget)
    total, first_over = reserved, None
    for i, message in enumerate(reversed(history), 1):
        total += message_tokens(message)
        if total > budget:
            first_over = i
            break
    if first_over is not None and (fitter.keep or new_has_user):
        assert fed == first_over


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=200))
def test_a_text_costs_a_quarter_token_per_code_point_below_u3000_and_one_from_it_up(text):
    assert text_quarters(text) == reference_quarters(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_a_string_message_costs_the_ceiling_of_its_quarters_plus_four(text):
    assert message_tokens({"role": "user", "content": text}) == math.ceil(reference_quarters(text) / 4) + 4


def test_code_points_are_counted_not_utf16_units():
    # U+1F600 is two UTF-16 units but one code point from U+3000 up: one token.
    assert text_quarters("\U0001f600") == 4
    assert text_quarters("日本語") == 12
    assert text_quarters("héllo") == 5
    assert message_tokens({"role": "user", "content": "日本"}) == 2 + 4
    assert message_tokens({"role": "user", "content": "abcde"}) == 2 + 4


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=40)),
            st.just({"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}),
        ),
        max_size=6,
    )
)
def test_text_parts_count_as_text_and_other_parts_256_each(parts):
    quarters = sum(reference_quarters(p["text"]) for p in parts if p["type"] == "text")
    images = sum(1 for p in parts if p["type"] != "text")
    assert (
        message_tokens({"role": "user", "content": parts})
        == math.ceil(quarters / 4) + images * NON_TEXT_PART_TOKENS + 4
    )


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40))
def test_tool_calls_count_as_their_compact_json_with_non_ascii_kept(name, arguments):
    calls = [{"id": "c1", "type": "function", "function": {"name": name, "arguments": arguments}}]
    compact = json.dumps(calls, separators=(",", ":"), ensure_ascii=False)
    expected = math.ceil(reference_quarters(compact) / 4) + 4
    assert message_tokens({"role": "assistant", "content": "", "tool_calls": calls}) == expected


@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 400), st.sampled_from(["user", "assistant", "tool"])), max_size=40),
    st.integers(0, 3000),
    st.integers(0, 600),
    st.booleans(),
    st.lists(st.integers(1, 12), max_size=4),
)
def test_pushing_many_at_once_is_pushing_each_in_turn(messages, budget, reserved, new_has_user, cuts):
    """`push_many` (the server's window rows, a chunk at a time) leaves the fitter as `push` does."""
    one, many = WindowFitter(budget, reserved, new_has_user), WindowFitter(budget, reserved, new_has_user)
    go_one = True
    for cost, role in messages:
        if not (go_one := one.push(cost, role)):
            break
    go_many, start = True, 0
    for size in [*cuts, len(messages)]:  # chunks of these sizes, then the rest
        chunk = messages[start : start + size]
        start += size
        if chunk and not (go_many := many.push_many([c for c, _ in chunk], [r for _, r in chunk])):
            break
    assert go_many == go_one
    assert [getattr(many, k) for k in WindowFitter.__slots__] == [
        getattr(one, k) for k in WindowFitter.__slots__
    ]
    assert many.result() == one.result()
