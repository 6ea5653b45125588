"""The real `openai` package (sync, async, streaming, tools) against the proxy on a live server.

Assertions are on what the client got and on what the memory holds afterwards.
"""

from __future__ import annotations

import json
import uuid

import openai
import pytest

from tests.proxy.conftest import entries, wait_for

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _client(
    live, upstream, *, memory: str | None = None, external: str | None = None, cls=openai.OpenAI, **kw
):
    headers = {
        "X-Upstream-Base-Url": upstream.openai_url,
        "X-Upstream-Authorization": "Bearer sk-stub-openai",
    }
    if memory:
        headers["X-Threadless-Memory"] = memory
    if external:
        headers["X-Threadless-External-Id"] = external
    return cls(
        base_url=live.url + "/v1/openai",
        api_key=live.key,
        default_headers=headers,
        max_retries=0,
        timeout=30,
        **kw,
    )


def _user() -> str:
    return "user-" + uuid.uuid4().hex[:8]


def test_a_plain_call_answers_the_stub_reply_and_the_memory_keeps_the_turn(live, upstream):
    client = _client(live, upstream, external=_user())
    raw = client.chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        messages=[
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Hello there"},
        ],
    )
    completion = raw.parse()
    assert completion.choices[0].message.content == "Hello from the stub."
    memory_id = raw.headers["x-threadless-memory"]
    assert memory_id.startswith("mem_") and raw.headers["x-threadless-turn"] == "1"
    stored = entries(live, memory_id)
    assert [(e["role"], e["content"], e["turn"]) for e in stored] == [
        ("user", "Hello there", 1),
        ("assistant", "Hello from the stub.", 1),
    ]
    sent = upstream.requests[-1]
    assert sent.path == "/v1/chat/completions"
    assert (
        sent.headers["authorization"] == "Bearer sk-stub-openai"
    )  # the provider key, not the Threadless key
    assert live.key not in json.dumps(sent.headers)
    assert sent.body["messages"][0] == {"role": "system", "content": "You are terse."}
    assert sent.body["model"] == "gpt-4o-mini"


def test_the_next_call_sends_the_remembered_history_upstream(live, upstream):
    client = _client(live, upstream, external=_user())
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "My name is Ada."}])
    # The client only sends its new message: the memory supplies the conversation.
    raw = client.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "What is my name?"}]
    )
    assert raw.headers["x-threadless-turn"] == "2"
    sent = [
        (m["role"], m["content"]) for m in upstream.requests[-1].body["messages"] if m["role"] != "system"
    ]
    assert sent == [
        ("user", "My name is Ada."),
        ("assistant", "Hello from the stub."),
        ("user", "What is my name?"),
    ]


def test_a_client_that_resends_the_whole_conversation_stores_each_message_once(live, upstream):
    client = _client(live, upstream, external=_user())
    first = [{"role": "user", "content": "one"}]
    client.chat.completions.create(model="m", messages=first)
    raw = client.chat.completions.with_raw_response.create(
        model="m",
        messages=[
            *first,
            {"role": "assistant", "content": "Hello from the stub."},
            {"role": "user", "content": "two"},
        ],
    )
    stored = entries(live, raw.headers["x-threadless-memory"])
    assert [e["content"] for e in stored] == ["one", "Hello from the stub.", "two", "Hello from the stub."]


def test_a_stream_with_usage_arrives_as_chunks_and_is_reported(live, upstream):
    client = _client(live, upstream, external=_user())
    raw = client.chat.completions.with_raw_response.create(
        model="m",
        messages=[{"role": "user", "content": "Stream please"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    memory_id = raw.headers["x-threadless-memory"]
    chunks = list(raw.parse())
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Hello from the stub."
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) == 4  # word by word
    assert chunks[-1].usage.total_tokens == 15 and chunks[-1].choices == []
    assert [(e["role"], e["content"]) for e in entries(live, memory_id)] == [
        ("user", "Stream please"),
        ("assistant", "Hello from the stub."),
    ]


WEATHER = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


async def test_the_async_client_runs_a_tool_round_trip_and_the_memory_keeps_it_in_one_turn(live, upstream):
    client = _client(live, upstream, external=_user(), cls=openai.AsyncOpenAI)
    messages = [{"role": "user", "content": "Weather in Paris?"}]
    raw = await client.chat.completions.with_raw_response.create(model="m", messages=messages, tools=WEATHER)
    first = raw.parse()
    call = first.choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather" and json.loads(call.function.arguments) == {"city": "Paris"}
    messages += [
        first.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "sunny, 21 C"},
    ]
    second = await client.chat.completions.create(model="m", messages=messages, tools=WEATHER)
    assert second.choices[0].message.content == "The tool said: sunny, 21 C"
    sent = upstream.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool"]
    assert sent[1]["tool_calls"][0]["id"] == "call_1" and sent[1]["content"] is None
    stored = entries(live, raw.headers["x-threadless-memory"])
    assert [(e["role"], e["turn"]) for e in stored] == [
        ("user", 1),
        ("assistant", 1),
        ("tool", 1),
        ("assistant", 1),
    ]
    assert stored[1]["tool_calls"][0]["function"]["name"] == "get_weather"
    assert stored[2]["tool_call_id"] == "call_1"
    await client.close()


async def test_a_streamed_tool_call_is_reported_with_its_whole_arguments(live, upstream):
    client = _client(live, upstream, external=_user(), cls=openai.AsyncOpenAI)
    raw = await client.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "Weather?"}], tools=WEATHER, stream=True
    )
    pieces = [
        c.choices[0].delta.tool_calls[0].function.arguments
        async for c in raw.parse()
        if c.choices and c.choices[0].delta.tool_calls
    ]
    assert json.loads("".join(pieces)) == {"city": "Paris"}
    stored = entries(live, raw.headers["x-threadless-memory"])
    assert stored[-1]["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ]
    await client.close()


def test_an_upstream_rate_limit_reaches_the_client_as_openai_raises_it_and_leaves_a_digest(live, upstream):
    upstream.push(
        status=429,
        headers={"retry-after": "7"},
        error={
            "error": {
                "message": "Rate limit reached for gpt-4o-mini on requests per min.",
                "type": "requests",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        },
    )
    with live.client() as http:
        memory = http.post(
            "/memories", json={"policy": {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}}}
        ).json()
    client = _client(live, upstream, memory=memory["id"])
    with pytest.raises(openai.RateLimitError) as caught:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.status_code == 429
    assert caught.value.code == "rate_limit_exceeded"
    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.response.headers["x-threadless-memory"] == memory["id"]
    stored = entries(live, memory["id"])
    kinds = [(e["kind"], e["committed"]) for e in stored]
    assert kinds == [("message", True), ("error", False), ("digest", True), ("action", True)]
    assert stored[2]["content"].startswith(
        "Task 'proxy.openai' failed: Chat model execution failed: Rate limit reached for gpt-4o-mini"
    )
    assert "(HTTP 429)" in stored[1]["content"]  # the raw error, staff only (uncommitted)


def test_without_strict_write_discipline_an_upstream_failure_stays_visible_and_leaves_no_digest(
    live, upstream
):
    upstream.push(
        status=500, error={"error": {"message": "The server had an error.", "type": "server_error"}}
    )
    client = _client(live, upstream, external=_user())
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    stored = entries(live, caught.value.response.headers["x-threadless-memory"])
    assert [(e["kind"], e["committed"]) for e in stored] == [("message", True), ("error", True)]
    assert "The server had an error." in stored[1]["content"]


def test_the_user_field_names_the_memory(live, upstream):
    user = _user()
    client = _client(live, upstream)
    one = client.chat.completions.with_raw_response.create(
        model="m", user=user, messages=[{"role": "user", "content": "a"}]
    )
    two = client.chat.completions.with_raw_response.create(
        model="m", user=user, messages=[{"role": "user", "content": "b"}]
    )
    assert one.headers["x-threadless-memory"] == two.headers["x-threadless-memory"] != "none"
    assert upstream.requests[-1].body["user"] == user


def test_a_call_naming_no_memory_is_forwarded_unchanged_and_says_so(live, upstream):
    client = _client(live, upstream)
    raw = client.chat.completions.with_raw_response.create(
        model="m",
        messages=[
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"},
        ],
    )
    assert raw.headers["x-threadless-memory"] == "none"
    assert raw.parse().choices[0].message.content == "Hello from the stub."
    assert [m["content"] for m in upstream.requests[-1].body["messages"]] == ["a", "b", "c"]


def test_a_disconnect_mid_stream_stores_the_partial_once_marked_and_closes_the_upstream(live, upstream):
    upstream.push(text="one two three four five six", hold_after=3)  # role chunk + "one " + "two "
    client = _client(live, upstream, external=_user())
    raw = client.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "Tell me a long story"}], stream=True
    )
    memory_id = raw.headers["x-threadless-memory"]
    stream = raw.parse()
    got = ""
    for chunk in stream:
        got += chunk.choices[0].delta.content or ""
        if got == "one two ":
            break
    stream.close()  # the client goes away mid-reply
    assert upstream.closed.wait(15), "the proxy did not close its upstream stream"
    stored = wait_for(lambda: [e for e in entries(live, memory_id) if e["role"] == "assistant"])
    assert [e["content"] for e in stored] == ["one two \n\n[cut off: the client disconnected]"]
    assert upstream.closed_early == 1
    # A later call still sees it once, marked.
    wait_for(lambda: False, timeout=0.3)
    assert len([e for e in entries(live, memory_id) if e["role"] == "assistant"]) == 1


def test_the_projects_proxy_settings_supply_the_upstream_and_its_key(live, upstream):
    with live.client() as http:
        answer = http.put(
            "/proxy/settings/openai", json={"base_url": upstream.openai_url, "api_key": "sk-from-store"}
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["api_key_set"] is True and "sk-from-store" not in answer.text
    try:
        client = openai.OpenAI(
            base_url=live.url + "/v1/openai",
            api_key=live.key,
            max_retries=0,
            default_headers={"X-Threadless-External-Id": _user()},
        )
        reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        assert reply.choices[0].message.content == "Hello from the stub."
        assert upstream.requests[-1].headers["authorization"] == "Bearer sk-from-store"
    finally:
        with live.client() as http:
            http.put("/proxy/settings/openai", json={"base_url": None, "api_key": None})


def test_facts_are_extracted_by_the_worker_from_what_the_user_said(live, upstream):
    client = _client(live, upstream, external=_user())
    raw = client.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "My name is Ada and I live in Lisbon."}]
    )
    memory_id = raw.headers["x-threadless-memory"]

    def facts():
        with live.client() as http:
            return [f["text"] for f in http.get(f"/memories/{memory_id}/facts").json()["data"]]

    found = wait_for(
        facts, timeout=240
    )  # returns at once when found; the shared worker can lag far behind under load
    assert any("Ada" in fact for fact in found), found


def test_a_wrong_threadless_key_is_refused_in_the_error_shape(live, upstream):
    client = openai.OpenAI(base_url=live.url + "/v1/openai", api_key="tl_proj_notakey", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as caught:
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert caught.value.body["code"] == "unauthorized"
    assert not upstream.requests


def test_the_clients_own_retry_after_an_upstream_500_stores_the_user_message_once(live, upstream):
    upstream.push(
        status=500, error={"error": {"message": "The server had an error.", "type": "server_error"}}
    )
    client = _client(live, upstream, external=_user())
    client = client.with_options(max_retries=1)
    raw = client.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "hi"}]
    )
    assert raw.parse().choices[0].message.content == "Hello from the stub."
    assert len(upstream.requests) == 2  # the SDK retried
    stored = entries(live, raw.headers["x-threadless-memory"])
    assert [(e["kind"], e["role"], e["turn"]) for e in stored] == [
        ("message", "user", 1),
        ("error", None, 1),
        ("message", "assistant", 1),
    ]
    sent = upstream.requests[-1].body["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == ["hi"]  # not twice
    assert "The server had an error." in sent[0]["content"]  # the failures block: the policy kept it visible
