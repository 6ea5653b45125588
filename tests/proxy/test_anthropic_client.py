"""The real `anthropic` package (sync, async, streaming, tools) against the proxy on a live server."""

from __future__ import annotations

import uuid

import anthropic
import pytest

from tests.proxy.conftest import entries, wait_for


def _client(
    live, upstream, *, memory: str | None = None, external: str | None = None, cls=anthropic.Anthropic
):
    headers = {"X-Upstream-Base-Url": upstream.anthropic_url, "X-Upstream-Authorization": "sk-ant-stub-key"}
    if memory:
        headers["X-Threadless-Memory"] = memory
    if external:
        headers["X-Threadless-External-Id"] = external
    # api_key= is where Anthropic's client puts the key: x-api-key, here the Threadless key.
    return cls(
        base_url=live.url + "/v1/anthropic",
        api_key=live.key,
        default_headers=headers,
        max_retries=0,
        timeout=30,
    )


def _user() -> str:
    return "user-" + uuid.uuid4().hex[:8]


def test_a_message_answers_the_stub_reply_and_the_memory_keeps_the_turn(live, upstream):
    client = _client(live, upstream, external=_user())
    raw = client.messages.with_raw_response.create(
        model="claude-sonnet-5-5",
        max_tokens=100,
        system="You are terse.",
        messages=[{"role": "user", "content": "Hello there"}],
    )
    message = raw.parse()
    assert message.content[0].text == "Hello from the stub."
    memory_id = raw.headers["x-threadless-memory"]
    assert [(e["role"], e["content"], e["turn"]) for e in entries(live, memory_id)] == [
        ("user", "Hello there", 1),
        ("assistant", "Hello from the stub.", 1),
    ]
    sent = upstream.requests[-1]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == "sk-ant-stub-key"  # the provider key as Anthropic expects it
    assert "authorization" not in sent.headers
    assert sent.headers["anthropic-version"]  # the client's own headers go through
    assert sent.body["system"] == "You are terse."
    assert sent.body["max_tokens"] == 100


def test_the_next_message_sends_the_remembered_history_upstream(live, upstream):
    client = _client(live, upstream, external=_user())
    client.messages.create(model="m", max_tokens=50, messages=[{"role": "user", "content": "I like tea."}])
    client.messages.create(
        model="m", max_tokens=50, messages=[{"role": "user", "content": "What do I like?"}]
    )
    assert upstream.requests[-1].body["messages"] == [
        {"role": "user", "content": "I like tea."},
        {"role": "assistant", "content": "Hello from the stub."},
        {"role": "user", "content": "What do I like?"},
    ]


def test_a_stream_arrives_event_by_event_and_is_reported(live, upstream):
    client = _client(live, upstream, external=_user())
    with client.messages.stream(
        model="m", max_tokens=50, messages=[{"role": "user", "content": "Stream please"}]
    ) as stream:
        texts = list(stream.text_stream)
        final = stream.get_final_message()
        memory_id = stream.response.headers["x-threadless-memory"]
    assert texts == ["Hello ", "from ", "the ", "stub."]
    assert final.stop_reason == "end_turn"
    assert [(e["role"], e["content"]) for e in entries(live, memory_id)] == [
        ("user", "Stream please"),
        ("assistant", "Hello from the stub."),
    ]


WEATHER = [
    {
        "name": "get_weather",
        "description": "Weather in a city",
        "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]


async def test_the_async_client_runs_a_tool_round_trip_streamed(live, upstream):
    client = _client(live, upstream, external=_user(), cls=anthropic.AsyncAnthropic)
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    async with client.messages.stream(model="m", max_tokens=50, messages=messages, tools=WEATHER) as stream:
        first = await stream.get_final_message()
        memory_id = stream.response.headers["x-threadless-memory"]
    use = first.content[0]
    assert use.type == "tool_use" and use.input == {"city": "Paris"}
    messages += [
        {"role": "assistant", "content": [b.model_dump() for b in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "sunny, 21 C"}],
        },
    ]
    second = await client.messages.create(model="m", max_tokens=50, messages=messages, tools=WEATHER)
    assert second.content[0].text == "The tool said: sunny, 21 C"
    sent = upstream.requests[-1].body["messages"]
    assert sent[1]["content"][0] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "get_weather",
        "input": {"city": "Paris"},
    }
    assert (
        sent[2]["content"][0]["type"] == "tool_result" and sent[2]["content"][0]["tool_use_id"] == "toolu_1"
    )
    stored = entries(live, memory_id)
    assert [(e["role"], e["turn"]) for e in stored] == [
        ("user", 1),
        ("assistant", 1),
        ("tool", 1),
        ("assistant", 1),
    ]
    assert stored[1]["tool_calls"][0]["id"] == "toolu_1"
    await client.close()


def test_an_upstream_overload_reaches_the_client_in_anthropics_shape_and_is_recorded(live, upstream):
    upstream.push(
        status=529, error={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    )
    with live.client() as http:
        memory = http.post(
            "/memories", json={"policy": {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}}}
        ).json()
    client = _client(live, upstream, memory=memory["id"])
    with pytest.raises(anthropic.APIStatusError) as caught:
        client.messages.create(model="m", max_tokens=50, messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 529
    assert caught.value.body["error"]["type"] == "overloaded_error"
    digests = [e["content"] for e in entries(live, memory["id"]) if e["kind"] == "digest"]
    assert digests == ["Task 'proxy.anthropic' failed: Chat model execution failed: Overloaded (HTTP 529)"]


def test_a_stream_that_breaks_off_with_an_error_event_stores_the_partial_and_the_failure(live, upstream):
    # the upstream keeps its connection open after the error event: the turn is stored before the
    # client sees the event, not when the upstream closes
    upstream.push(text="one two three", error_after=4, hold_after_error=True)
    client = _client(live, upstream, external=_user())
    with pytest.raises(anthropic.APIStatusError):
        with client.messages.stream(
            model="m", max_tokens=50, messages=[{"role": "user", "content": "go"}]
        ) as s:
            memory_id = s.response.headers["x-threadless-memory"]
            list(s.text_stream)
    stored = entries(live, memory_id)
    assert [(e["kind"], e["role"]) for e in stored] == [
        ("message", "user"),
        ("message", "assistant"),
        ("error", None),
    ]
    assert stored[1]["content"] == "one \n\n[cut off: the upstream stream ended early]"
    assert "Streaming chat failed: Overloaded" in stored[2]["content"]


def test_a_disconnect_mid_stream_stores_the_partial_once_marked_and_closes_the_upstream(live, upstream):
    upstream.push(text="one two three four five", hold_after=5)  # start, block, ping, "one ", "two "
    client = _client(live, upstream, external=_user())
    with client.messages.stream(
        model="m", max_tokens=50, messages=[{"role": "user", "content": "long"}]
    ) as stream:
        memory_id = stream.response.headers["x-threadless-memory"]
        got = ""
        for text in stream.text_stream:
            got += text
            if got == "one two ":
                break
    assert upstream.closed.wait(15), "the proxy did not close its upstream stream"
    stored = wait_for(lambda: [e for e in entries(live, memory_id) if e["role"] == "assistant"])
    assert [e["content"] for e in stored] == ["one two \n\n[cut off: the client disconnected]"]
    assert upstream.closed_early == 1


def test_the_threadless_key_may_come_as_a_bearer_token_too(live, upstream):
    client = anthropic.Anthropic(
        base_url=live.url + "/v1/anthropic",
        auth_token=live.key,
        max_retries=0,
        default_headers={
            "X-Upstream-Base-Url": upstream.anthropic_url,
            "X-Upstream-Authorization": "sk-ant-stub-key",
        },
    )
    reply = client.messages.create(model="m", max_tokens=20, messages=[{"role": "user", "content": "hi"}])
    assert reply.content[0].text == "Hello from the stub."
    assert upstream.requests[-1].headers["x-api-key"] == "sk-ant-stub-key"
