"""to_openai() and to_anthropic() on a decorated request."""

from __future__ import annotations

from threadless import DecoratedRequest

CALL = {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}
MESSAGES = [
    {"role": "user", "content": "Weather in Oslo?"},
    {"role": "assistant", "content": "Let me check.", "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "content": "-3°C, snow"},
    {"role": "assistant", "content": "It is -3°C and snowing."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "And this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ],
    },
]


def request(instructions="Be brief.\n\n## What you know\n- Lives in Oslo.") -> DecoratedRequest:
    return DecoratedRequest(memory_id="mem_1", instructions=instructions, messages=MESSAGES)


def test_openai_gets_the_instructions_as_the_first_system_message():
    out = request().to_openai()
    assert out[0] == {"role": "system", "content": "Be brief.\n\n## What you know\n- Lives in Oslo."}
    assert out[1:] == MESSAGES


def test_openai_without_instructions_has_no_empty_system_message():
    assert request("").to_openai() == MESSAGES


def test_anthropic_gets_a_system_string_and_tool_blocks():
    out = request().to_anthropic()
    assert out["system"] == "Be brief.\n\n## What you know\n- Lives in Oslo."
    assert [m["role"] for m in out["messages"]] == ["user", "assistant", "user", "assistant", "user"]
    assert out["messages"][1]["content"] == [
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Oslo"}},
    ]
    assert out["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "call_1", "content": "-3°C, snow"}
    ]
    assert out["messages"][4]["content"] == [
        {"type": "text", "text": "And this?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
    ]


def test_anthropic_merges_consecutive_tool_results_and_the_next_user_message():
    calls = [CALL, {**CALL, "id": "call_2"}]
    messages = [
        {"role": "user", "content": "two lookups"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "call_1", "content": "a"},
        {"role": "tool", "tool_call_id": "call_2", "content": "b"},
        {"role": "user", "content": "thanks"},
    ]
    out = DecoratedRequest(memory_id="m", instructions="", messages=messages).to_anthropic()
    assert out["system"] == ""
    assert [m["role"] for m in out["messages"]] == ["user", "assistant", "user"]
    assert [b["type"] for b in out["messages"][1]["content"]] == ["tool_use", "tool_use"]
    assert [b.get("tool_use_id") or b.get("text") for b in out["messages"][2]["content"]] == [
        "call_1",
        "call_2",
        "thanks",
    ]


def test_anthropic_keeps_unparseable_tool_arguments_visible():
    messages = [
        {"role": "user", "content": "x"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{**CALL, "function": {"name": "f", "arguments": "not json"}}],
        },
    ]
    out = DecoratedRequest(memory_id="m", instructions="", messages=messages).to_anthropic()
    assert out["messages"][1]["content"] == [
        {"type": "tool_use", "id": "call_1", "name": "f", "input": {"arguments": "not json"}}
    ]
