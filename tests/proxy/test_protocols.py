"""The pure protocol translation: new messages, Anthropic blocks both ways, stream accumulation."""

from __future__ import annotations

import json

from proxy.protocols import (
    AnthropicStream,
    OpenAIStream,
    anthropic_body,
    anthropic_messages,
    cut_off,
    new_messages,
    openai_messages,
)


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
