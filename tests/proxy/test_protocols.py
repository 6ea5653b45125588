"""The pure protocol translation: new messages, Anthropic blocks both ways, stream accumulation."""

from __future__ import annotations

import json

import pytest

from proxy.protocols import (
    AnthropicStream,
    OpenAIStream,
    anthropic_body,
    anthropic_messages,
    cut_off,
    new_messages,
    openai_messages,
)
from proxy.responses import ResponsesStream


def test_new_messages_are_the_ones_after_the_last_assistant_message_once_the_memory_has_history():
    sent = openai_messages(
        [
            {"role": "developer", "content": "Be kind."},
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b", "refusal": None},
            {"role": "user", "content": [{"type": "text", "text": "c"}]},
        ]
    )
    assert new_messages(sent, has_history=True) == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "c"},
    ]
    assert [m["content"] for m in new_messages(sent, has_history=False)] == ["Be kind.", "a", "b", "c"]


def test_anthropic_tool_blocks_become_tool_calls_and_tool_messages_and_go_back_the_same():
    body = {
        "system": [{"type": "text", "text": "Sys"}],
        "messages": [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me check."},
                    {"type": "tool_use", "id": "tu1", "name": "w", "input": {"c": "P"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "tu1", "content": "sunny"},
                    {"type": "text", "text": "and tomorrow?"},
                ],
            },
        ],
    }
    memory = anthropic_messages(body)
    assert [m["role"] for m in memory] == ["system", "user", "assistant", "tool", "user"]
    assert memory[2]["tool_calls"][0]["function"] == {"name": "w", "arguments": json.dumps({"c": "P"})}
    back = anthropic_body({"model": "m"}, instructions="Sys + facts", messages=memory[1:])
    assert back["system"] == "Sys + facts"
    assert [m["role"] for m in back["messages"]] == ["user", "assistant", "user"]  # tool result folded in
    assert back["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "tu1", "content": "sunny"},
        {"type": "text", "text": "and tomorrow?"},
    ]


def test_the_openai_stream_accumulates_text_and_tool_call_pieces():
    acc = OpenAIStream()
    for delta in (
        {"content": "Hi "},
        {"content": "there"},
        {"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "w", "arguments": '{"c"'}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": ': "P"}'}}]},
    ):
        acc.feed("message", json.dumps({"choices": [{"index": 0, "delta": delta}]}))
    acc.feed("message", "[DONE]")
    assert acc.done and acc.message() == {
        "role": "assistant",
        "content": "Hi there",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "w", "arguments": '{"c": "P"}'}}
        ],
    }


def test_the_anthropic_stream_accumulates_blocks_and_marks_a_cut_off_reply():
    acc = AnthropicStream()
    acc.feed(
        "content_block_start",
        json.dumps(
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
        ),
    )
    acc.feed(
        "content_block_delta",
        json.dumps(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Half a"}}
        ),
    )
    assert not acc.done
    assert cut_off(acc.message(), "[cut off: x]") == {
        "role": "assistant",
        "content": "Half a\n\n[cut off: x]",
    }
    assert cut_off(None, "[cut off: x]") is None


def _longest_string_held(value) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return max((_longest_string_held(v) for v in value.values()), default=0)
    if isinstance(value, (list, tuple)):
        return max((_longest_string_held(v) for v in value), default=0)
    if hasattr(value, "__dataclass_fields__"):
        return max(_longest_string_held(getattr(value, name)) for name in value.__dataclass_fields__)
    return 0


def _openai_events(delta: str):
    for _ in range(3):
        yield "", json.dumps({"choices": [{"index": 0, "delta": {"content": delta}}]})
        call = {"index": 0, "id": "c1", "function": {"name": "w", "arguments": delta}}
        yield "", json.dumps({"choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})


def _anthropic_events(delta: str):
    start = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
    yield "content_block_start", json.dumps(start)
    tool = {"type": "tool_use", "id": "t1", "name": "w", "input": {}}
    yield (
        "content_block_start",
        json.dumps({"type": "content_block_start", "index": 1, "content_block": tool}),
    )
    for piece in ('{"k": "', delta, delta, delta, '"}'):
        text = {"type": "text_delta", "text": delta if piece == delta else ""}
        yield "content_block_delta", json.dumps({"type": "content_block_delta", "index": 0, "delta": text})
        args = {"type": "input_json_delta", "partial_json": piece}
        yield "content_block_delta", json.dumps({"type": "content_block_delta", "index": 1, "delta": args})


def _responses_events(delta: str):
    item = {"type": "function_call", "call_id": "c1", "name": "w", "arguments": ""}
    yield (
        "response.output_item.added",
        json.dumps({"type": "response.output_item.added", "output_index": 1, "item": item}),
    )
    for _ in range(3):
        text = {"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": delta}
        yield "response.output_text.delta", json.dumps(text)
        args = {"type": "response.function_call_arguments.delta", "output_index": 1, "delta": delta}
        yield "response.function_call_arguments.delta", json.dumps(args)


@pytest.mark.parametrize(
    "stream, events",
    [
        (OpenAIStream, _openai_events),
        (AnthropicStream, _anthropic_events),
        (ResponsesStream, _responses_events),
    ],
    ids=["openai", "anthropic", "responses"],
)
def test_every_stream_keeps_deltas_as_pieces_and_joins_them_once(stream, events):
    """A string grown by each delta is quadratic on the event loop: between events no accumulator
    holds a string longer than one event brought, and the reply is the deltas joined."""
    acc, delta = stream(), "x" * 40
    for event, data in events(delta):
        acc.feed(event, data)
    assert _longest_string_held(acc) <= len(delta)
    message = acc.message()
    assert delta * 3 in json.dumps(message)
    assert delta * 3 in json.dumps(message["tool_calls"])


def test_a_responses_event_with_an_index_that_is_not_a_number_counts_as_index_zero():
    acc = ResponsesStream()
    for index in ("zzz", None, -1, 10**9, 1.5):
        acc.feed(
            "response.output_text.delta",
            json.dumps({"type": "response.output_text.delta", "output_index": index, "delta": "a"}),
        )
        item = {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}
        acc.feed(
            "response.output_item.done",
            json.dumps({"type": "response.output_item.done", "output_index": index, "item": item}),
        )
    assert acc.message()["content"] == "aaaaa"
    assert [c["function"]["arguments"] for c in acc.message()["tool_calls"]] == ["{}"]


def test_an_anthropic_block_start_that_is_not_an_object_counts_as_an_empty_text_block():
    acc = AnthropicStream()
    acc.feed(
        "content_block_start", json.dumps({"type": "content_block_start", "index": 0, "content_block": "xx"})
    )
    text = {"type": "text_delta", "text": "ok"}
    acc.feed("content_block_delta", json.dumps({"type": "content_block_delta", "index": 0, "delta": text}))
    assert acc.message()["content"] == "ok"
