"""The real `openai` package's Responses and Conversations clients against the proxy on a live
server, with the stub upstream speaking the Responses API.

Assertions are on what the client got, what upstream received and what the memory holds.
"""

from __future__ import annotations

import uuid

import anthropic
import httpx
import openai
import pytest

from tests.proxy.conftest import entries, wait_for

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

WEATHER = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


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


def _said(live, memory_id: str) -> list[tuple]:
    return [(e["role"], e["content"], e["turn"]) for e in entries(live, memory_id) if e["kind"] == "message"]


def test_a_plain_response_answers_the_stub_and_the_memory_keeps_the_turn(live, upstream):
    client = _client(live, upstream, external=_user())
    raw = client.responses.with_raw_response.create(
        model="gpt-5-mini", instructions="You are terse.", input="Hi, I'm Ana."
    )
    response = raw.parse()
    assert response.output_text == "Hello from the stub."
    memory_id = raw.headers["x-threadless-memory"]
    assert memory_id.startswith("mem_") and raw.headers["x-threadless-turn"] == "1"
    assert response.id.startswith("resp_tl") and response.id != "resp_upstream_1"
    assert _said(live, memory_id) == [("user", "Hi, I'm Ana.", 1), ("assistant", "Hello from the stub.", 1)]
    sent = upstream.requests[-1]
    assert sent.path == "/v1/responses"
    assert sent.headers["authorization"] == "Bearer sk-stub-openai"
    assert sent.body["store"] is False  # the memory is the state
    assert sent.body["instructions"].startswith("You are terse.")
    assert sent.body["input"] == [{"type": "message", "role": "user", "content": "Hi, I'm Ana."}]
    assert "previous_response_id" not in sent.body and "conversation" not in sent.body


def test_previous_response_id_selects_the_memory_and_is_not_sent_upstream(live, upstream):
    client = _client(live, upstream, external=_user())
    first = client.responses.with_raw_response.create(model="m", input="My name is Ana.")
    plain = _client(live, upstream)  # no memory header: the response id names the memory
    raw = plain.responses.with_raw_response.create(
        model="m", input="What is my name?", previous_response_id=first.parse().id
    )
    assert raw.headers["x-threadless-memory"] == first.headers["x-threadless-memory"]
    assert raw.headers["x-threadless-turn"] == "2"
    assert raw.parse().id != first.parse().id  # one id per response, though both name the memory
    body = upstream.requests[-1].body
    assert "previous_response_id" not in body
    assert [(i["role"], i["content"]) for i in body["input"]] == [
        ("user", "My name is Ana."),
        ("assistant", "Hello from the stub."),
        ("user", "What is my name?"),
    ]


def test_the_end_user_id_names_the_memory_as_on_chat_completions(live, upstream):
    client = _client(live, upstream)
    end_user = _user()
    first = client.responses.with_raw_response.create(model="m", input="hi", safety_identifier=end_user)
    again = client.responses.with_raw_response.create(model="m", input="again", user=end_user)
    assert first.headers["x-threadless-memory"] == again.headers["x-threadless-memory"] != "none"
    with live.client() as http:
        named = http.get("/memories", params={"external_id": end_user}).json()["data"]
    assert [m["id"] for m in named] == [first.headers["x-threadless-memory"]]
    assert upstream.requests[-1].body["user"] == end_user  # the caller's field goes on as sent


def test_a_previous_response_id_the_proxy_did_not_issue_is_a_400_that_says_what_to_do(live, upstream):
    client = _client(live, upstream, external=_user())
    issued = client.responses.create(model="m", input="hi").id
    for unknown in ("resp_68a1f0c2d9e4", issued[:-1] + ("0" if issued[-1] != "0" else "1")):
        with pytest.raises(openai.BadRequestError) as caught:
            client.responses.create(model="m", input="again", previous_response_id=unknown)
        error = caught.value.body
        assert set(error) == {"message", "type", "param", "code"}
        assert error["type"] == "invalid_request_error" and error["param"] == "previous_response_id"
        assert error["code"] == "previous_response_not_found"
        assert (
            "not issued by this Threadless proxy" in error["message"]
            and "send only the new input" in error["message"]
        )
    assert len(upstream.requests) == 1


def test_a_stream_arrives_as_typed_events_in_order_and_is_reported(live, upstream):
    client = _client(live, upstream, external=_user())
    raw = client.responses.with_raw_response.create(model="m", input="Stream please", stream=True)
    memory_id = raw.headers["x-threadless-memory"]
    events = list(raw.parse())
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert "response.output_text.delta" in kinds
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == "Hello from the stub."
    ids = {e.response.id for e in events if hasattr(e, "response")}
    assert len(ids) == 1 and ids.pop().startswith("resp_tl")
    assert _said(live, memory_id) == [("user", "Stream please", 1), ("assistant", "Hello from the stub.", 1)]


def test_the_streaming_helper_gives_the_final_response_with_an_issued_id(live, upstream):
    client = _client(live, upstream, external=_user())
    with client.responses.stream(model="m", input="Stream please") as stream:
        final = stream.get_final_response()
    assert final.output_text == "Hello from the stub." and final.id.startswith("resp_tl")


async def test_a_function_call_and_its_output_stay_paired_in_memory_and_upstream(live, upstream):
    client = _client(live, upstream, external=_user(), cls=openai.AsyncOpenAI)
    raw = await client.responses.with_raw_response.create(
        model="m", input="Weather in Paris?", tools=[WEATHER]
    )
    first = raw.parse()
    memory_id = raw.headers["x-threadless-memory"]
    call = next(i for i in first.output if i.type == "function_call")
    assert call.name == "get_weather" and call.arguments == '{"city": "Paris"}'
    second = await client.responses.create(
        model="m",
        tools=[WEATHER],
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "21 °C and sunny"}],
    )
    assert second.output_text == "The tool said: 21 °C and sunny"
    sent = upstream.requests[-1].body["input"]
    assert [i.get("type") for i in sent] == ["message", "function_call", "function_call_output"]
    assert sent[1]["call_id"] == sent[2]["call_id"] == call.call_id and "id" not in sent[1]
    stored = [e for e in entries(live, memory_id) if e["kind"] == "message"]
    assert [(e["role"], e["turn"]) for e in stored] == [
        ("user", 1),
        ("assistant", 1),
        ("tool", 1),
        ("assistant", 1),
    ]
    assert stored[1]["tool_calls"][0]["id"] == stored[2]["tool_call_id"] == call.call_id


async def test_a_streamed_function_call_is_reported_with_its_whole_arguments(live, upstream):
    client = _client(live, upstream, external=_user(), cls=openai.AsyncOpenAI)
    raw = await client.responses.with_raw_response.create(
        model="m", input="Weather?", tools=[WEATHER], stream=True
    )
    events = [e async for e in raw.parse()]
    assert "response.function_call_arguments.delta" in [e.type for e in events]
    stored = wait_for(
        lambda: [e for e in entries(live, raw.headers["x-threadless-memory"]) if e["role"] == "assistant"]
    )
    assert stored[0]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}


def test_reasoning_items_are_passed_upstream_but_never_stored(live, upstream):
    upstream.push(
        tool=("get_weather", {"city": "Oslo"}), reasoning="The user wants the weather: call the tool."
    )
    client = _client(live, upstream, external=_user())
    first = client.responses.with_raw_response.create(
        model="o4-mini", input="Weather in Oslo?", tools=[WEATHER]
    )
    memory_id = first.headers["x-threadless-memory"]
    output = [i.model_dump(exclude_unset=True) for i in first.parse().output]
    assert [i["type"] for i in output] == ["reasoning", "function_call"]
    # As the Agents SDK does without a session: the whole conversation, reasoning item included.
    client.responses.create(
        model="o4-mini",
        tools=[WEATHER],
        input=[
            {"role": "user", "content": "Weather in Oslo?"},
            *output,
            {"type": "function_call_output", "call_id": output[1]["call_id"], "output": "-3 °C"},
        ],
    )
    sent = upstream.requests[-1].body["input"]
    assert [i.get("type") for i in sent] == ["message", "reasoning", "function_call", "function_call_output"]
    assert sent[1]["id"] == "rs_1" and sent[1]["encrypted_content"] == "opaque-reasoning-state"
    stored = entries(live, memory_id)
    assert "call the tool" not in str(stored) and "opaque-reasoning-state" not in str(stored)
    assert [e["role"] for e in stored if e["kind"] == "message"] == ["user", "assistant", "tool", "assistant"]
    # The next turn's upstream input is built from the memory: no reasoning item in it.
    client.responses.create(model="o4-mini", input="Thanks!")
    assert "reasoning" not in [i.get("type") for i in upstream.requests[-1].body["input"]]


def _keeping_reasoning(live) -> str:
    with live.client() as http:
        answer = http.post("/memories", json={"policy": {"reasoningItems": "keep"}})
        assert answer.status_code == 201, answer.text
        return answer.json()["id"]


def test_a_memory_that_keeps_reasoning_gives_it_back_upstream_before_the_call_it_led_to(live, upstream):
    upstream.push(
        tool=("get_weather", {"city": "Oslo"}), reasoning="The user wants the weather: call the tool."
    )
    memory_id = _keeping_reasoning(live)
    client = _client(live, upstream, memory=memory_id)
    first = client.responses.create(
        model="o4-mini", input="Weather in Oslo?", tools=[WEATHER], include=["reasoning.encrypted_content"]
    )
    call = next(i for i in first.output if i.type == "function_call")
    # Only the new item, as with any memory: the window brings back the reasoning and the call.
    client.responses.create(
        model="o4-mini",
        tools=[WEATHER],
        previous_response_id=first.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "-3 °C"}],
    )
    sent = upstream.requests[-1].body["input"]
    assert [i.get("type") for i in sent] == ["message", "reasoning", "function_call", "function_call_output"]
    assert sent[1] == {
        "type": "reasoning",
        "id": "rs_1",
        "encrypted_content": "opaque-reasoning-state",
        "summary": [{"type": "summary_text", "text": "The user wants the weather: call the tool."}],
    }
    stored = [e for e in entries(live, memory_id) if e["kind"] == "message"]
    assert [(e["role"], e["committed"]) for e in stored] == [
        ("user", True),
        ("assistant", True),
        ("tool", True),
        ("assistant", True),
    ]
    assert [p["type"] for p in stored[1]["content"]] == ["reasoning"]  # kept as a part of the reply
    assert stored[1]["tool_calls"][0]["id"] == call.call_id
    # The next turn still carries it: the memory said so.
    client.responses.create(model="o4-mini", input="Thanks!")
    later = upstream.requests[-1].body["input"]
    assert [i.get("type") for i in later][:3] == ["message", "reasoning", "function_call"]
    assert later[1]["id"] == "rs_1"
    items = client.conversations.items.list(memory_id, order="asc").data
    assert [i.type for i in items][:3] == ["message", "reasoning", "function_call"]
    assert items[1].encrypted_content == "opaque-reasoning-state"


def test_a_streamed_reply_keeps_its_reasoning_in_a_memory_that_says_so(live, upstream):
    upstream.push(text="It is cold.", reasoning="Short answer.")
    memory_id = _keeping_reasoning(live)
    client = _client(live, upstream, memory=memory_id)
    with client.responses.stream(model="o4-mini", input="Weather?") as stream:
        final = stream.get_final_response()
    assert [i.type for i in final.output] == ["reasoning", "message"]
    client.responses.create(model="o4-mini", input="And tomorrow?")
    sent = upstream.requests[-1].body["input"]
    assert [(i.get("type"), i.get("role")) for i in sent] == [
        ("message", "user"),
        ("reasoning", None),
        ("message", "assistant"),
        ("message", "user"),
    ]
    assert sent[2]["content"] == [{"type": "output_text", "text": "It is cold."}]
    said = [e for e in entries(live, memory_id) if e["role"] == "assistant"]
    assert [p["type"] for p in said[0]["content"]] == ["reasoning", "text"]
    assert said[0]["content"][1]["text"] == "It is cold."


def test_a_refusal_is_reported_as_the_assistants_text(live, upstream):
    upstream.push(refusal="I can't help with that.")
    client = _client(live, upstream, external=_user())
    raw = client.responses.with_raw_response.create(model="m", input="Something bad")
    assert _said(live, raw.headers["x-threadless-memory"])[-1] == ("assistant", "I can't help with that.", 1)


def test_input_images_are_stored_as_parts_and_sent_back_as_input_image(live, upstream):
    client = _client(live, upstream, external=_user())
    image = "data:image/png;base64,iVBORw0KGgo="
    client.responses.create(
        model="m",
        input=[
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "What is this?"},
                    {"type": "input_image", "image_url": image, "detail": "low"},
                ],
            }
        ],
    )
    client.responses.create(model="m", input="And again?")
    sent = upstream.requests[-1].body["input"][0]
    assert sent["content"] == [
        {"type": "input_text", "text": "What is this?"},
        {"type": "input_image", "image_url": image, "detail": "low"},
    ]


def test_an_upstream_rate_limit_reaches_the_client_as_openai_raises_it(live, upstream):
    upstream.push(
        status=429,
        headers={"retry-after": "7"},
        error={
            "error": {
                "message": "Rate limit reached for gpt-5-mini on requests per min.",
                "type": "requests",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        },
    )
    client = _client(live, upstream, external=_user())
    with pytest.raises(openai.RateLimitError) as caught:
        client.responses.create(model="m", input="hi")
    assert caught.value.code == "rate_limit_exceeded"
    assert caught.value.response.headers["retry-after"] == "7"
    memory_id = caught.value.response.headers["x-threadless-memory"]
    stored = entries(live, memory_id)
    assert [e["kind"] for e in stored] == ["message", "error"]
    assert "Rate limit reached" in stored[1]["content"]


def test_an_upstream_failure_follows_the_memorys_strict_policy(live, upstream):
    upstream.push(
        status=500,
        error={
            "error": {
                "message": "Internal failure at https://internal.example/x",
                "type": "server_error",
                "param": None,
                "code": None,
            }
        },
    )
    with live.client() as http:
        memory_id = http.post(
            "/memories", json={"policy": {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}}}
        ).json()["id"]
    client = _client(live, upstream, memory=memory_id)
    with pytest.raises(openai.InternalServerError):
        client.responses.create(model="m", input="hi")
    stored = {e["kind"]: e for e in entries(live, memory_id)}
    assert {k: e["committed"] for k, e in stored.items()} == {
        "message": True,
        "error": False,
        "digest": True,
        "action": True,
    }
    assert stored["digest"]["content"].startswith("Task 'proxy.openai' failed:")
    client.responses.create(model="m", input="again?")  # the raw failure is not in the next view
    assert "internal.example" not in str(upstream.requests[-1].body)


def test_the_egress_policy_applies_to_the_responses_upstream(live, upstream):
    client = openai.OpenAI(
        base_url=live.url + "/v1/openai",
        api_key=live.key,
        max_retries=0,
        default_headers={
            "X-Upstream-Base-Url": "http://169.254.169.254/v1",
            "X-Upstream-Authorization": "Bearer sk-x",
            "X-Threadless-External-Id": _user(),
        },
    )
    with pytest.raises(openai.InternalServerError) as caught:
        client.responses.create(model="m", input="hi")
    assert caught.value.status_code == 502 and set(caught.value.body) == {"message", "type", "param", "code"}
    assert "egress to 169.254.169.254 is not allowed" in caught.value.body["message"]
    assert not upstream.requests


def test_an_error_mid_stream_reaches_the_client_and_the_part_is_stored_marked(live, upstream):
    upstream.push(
        text="one two three four", error_after=6
    )  # created, in_progress, item, part, "one ", "two "
    client = _client(live, upstream, external=_user())
    raw = client.responses.with_raw_response.create(model="m", input="Go", stream=True)
    memory_id = raw.headers["x-threadless-memory"]
    events = list(raw.parse())  # OpenAI's own error event, passed through as the client knows it
    assert [e.type for e in events][-2:] == ["response.output_text.delta", "error"]
    assert events[-1].code == "server_error"
    stored = entries(live, memory_id)
    said = [e for e in stored if e["kind"] == "message"]
    assert said[-1]["content"] == "one two \n\n[cut off: the upstream stream ended early]"
    assert any(e["kind"] == "error" and "The server had an error" in e["content"] for e in stored)


def test_a_disconnect_mid_stream_stores_the_partial_once_and_closes_the_upstream(live, upstream):
    upstream.push(text="one two three four five six", hold_after=6)
    client = _client(live, upstream, external=_user())
    raw = client.responses.with_raw_response.create(model="m", input="Tell me a long story", stream=True)
    memory_id = raw.headers["x-threadless-memory"]
    stream = raw.parse()
    got = ""
    for event in stream:
        got += getattr(event, "delta", "") if event.type == "response.output_text.delta" else ""
        if got == "one two ":
            break
    stream.close()
    assert upstream.closed.wait(15), "the proxy did not close its upstream stream"
    stored = wait_for(lambda: [e for e in entries(live, memory_id) if e["role"] == "assistant"])
    assert [e["content"] for e in stored] == ["one two \n\n[cut off: the client disconnected]"]
    wait_for(lambda: False, timeout=0.3)
    assert len([e for e in entries(live, memory_id) if e["role"] == "assistant"]) == 1


def test_store_set_by_the_caller_is_forwarded_as_set(live, upstream):
    client = _client(live, upstream, external=_user())
    client.responses.create(model="m", input="keep it", store=True)
    assert upstream.requests[-1].body["store"] is True


def test_a_call_naming_no_memory_is_forwarded_without_one(live, upstream):
    client = _client(live, upstream)
    raw = client.responses.with_raw_response.create(
        model="m",
        input=[
            {"role": "user", "content": "a", "id": "msg_x"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"},
        ],
    )
    assert raw.headers["x-threadless-memory"] == "none"
    assert raw.parse().id == "resp_upstream_1"  # nothing to name: the upstream's own id
    body = upstream.requests[-1].body
    assert body["store"] is False and [i["content"] for i in body["input"]] == ["a", "b", "c"]
    assert "id" not in body["input"][0]  # no item id reaches an upstream that stores nothing


def test_retrieving_or_deleting_an_issued_response_says_where_its_turn_is_kept(live, upstream):
    client = _client(live, upstream, external=_user())
    raw = client.responses.with_raw_response.create(model="m", input="Hi, I'm Ana.")
    memory_id, issued = raw.headers["x-threadless-memory"], raw.parse().id
    calls = (
        lambda: client.responses.retrieve(issued),
        lambda: client.responses.delete(issued),
        lambda: client.responses.input_items.list(issued),
        lambda: client.responses.cancel(issued),
    )
    for call in calls:
        with pytest.raises(openai.NotFoundError) as caught:
            call()
        error = caught.value.body
        assert set(error) == {"message", "type", "param", "code"} and error["type"] == "invalid_request_error"
        assert error["code"] == "response_not_stored"
        assert f"keeps the conversation in memory {memory_id}" in error["message"]
        assert f"/v1/openai/conversations/{memory_id}/items" in error["message"]
    # what the answer points at works, and nothing was deleted
    items = client.conversations.items.list(memory_id, order="asc").data
    assert [(i.role, i.content[0].text) for i in items] == [
        ("user", "Hi, I'm Ana."),
        ("assistant", "Hello from the stub."),
    ]
    assert len(upstream.requests) == 1


def test_retrieving_a_response_the_proxy_did_not_issue_is_a_404_that_says_so(live, upstream):
    client = _client(live, upstream)
    for unknown in ("resp_68a1f0c2d9e4", "resp_tl" + "A" * 20 + "x00000000x0000000000000000"):
        with pytest.raises(openai.NotFoundError) as caught:
            client.responses.retrieve(unknown)
        assert caught.value.body["code"] == "response_not_stored"
        assert "was not issued by this Threadless proxy" in caught.value.body["message"]
    other = openai.OpenAI(base_url=live.url + "/v1/openai", api_key="tl_proj_notakey", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        other.responses.retrieve("resp_68a1f0c2d9e4")


# --- Conversations ---------------------------------------------------------------------------------


def test_a_conversation_is_a_memory_and_responses_append_to_it(live, upstream):
    client = _client(live, upstream)
    conversation = client.conversations.create(
        metadata={"topic": "trip"},
        items=[
            {"type": "message", "role": "user", "content": "I'm planning a trip to Lisbon."},
            {"type": "message", "role": "assistant", "content": "Lovely! When?"},
        ],
    )
    assert conversation.id.startswith("mem_") and conversation.object == "conversation"
    assert conversation.metadata == {"topic": "trip"}
    raw = client.responses.with_raw_response.create(model="m", conversation=conversation.id, input="In May.")
    response = raw.parse()
    assert raw.headers["x-threadless-memory"] == conversation.id
    assert response.conversation.id == conversation.id
    sent = upstream.requests[-1].body
    assert "conversation" not in sent
    assert [i["content"] for i in sent["input"]] == [
        "I'm planning a trip to Lisbon.",
        "Lovely! When?",
        "In May.",
    ]
    items = client.conversations.items.list(conversation.id, order="asc")
    assert [(i.type, i.role, i.content[0].text) for i in items.data] == [
        ("message", "user", "I'm planning a trip to Lisbon."),
        ("message", "assistant", "Lovely! When?"),
        ("message", "user", "In May."),
        ("message", "assistant", "Hello from the stub."),
    ]
    with live.client() as http:
        memory = http.get(f"/memories/{conversation.id}").json()
    assert memory["metadata"] == {"topic": "trip"}


def test_a_conversation_decorates_from_its_window_not_its_whole_item_list(live, upstream):
    client = _client(live, upstream)
    filler = "This is an older message about nothing in particular, padded out to take some room. " * 4
    conversation = client.conversations.create(
        items=[
            {"type": "message", "role": "user" if n % 2 == 0 else "assistant", "content": f"{n}: {filler}"}
            for n in range(20)
        ]
    )
    client.responses.create(
        model="m",
        conversation=conversation.id,
        input="Newest question?",
        extra_headers={"X-Threadless-Budget": "600"},
    )
    sent = upstream.requests[-1].body["input"]
    assert 1 < len(sent) < 21 and sent[-1]["content"] == "Newest question?"
    texts = [i["content"] for i in sent[:-1]]
    assert texts[-1].startswith("19: ") and not any(t.startswith("0: ") for t in texts)  # the newest kept


def test_conversation_items_paginate_with_after_order_and_limit(live, upstream):
    client = _client(live, upstream)
    conversation = client.conversations.create(
        items=[{"type": "message", "role": "user", "content": f"message {n}"} for n in range(5)]
    )
    page = client.conversations.items.list(conversation.id, order="asc", limit=2)
    assert [i.content[0].text for i in page.data] == ["message 0", "message 1"] and page.has_more
    assert page.first_id == page.data[0].id and page.last_id == page.data[-1].id
    every = [
        i.content[0].text for i in client.conversations.items.list(conversation.id, order="asc", limit=2)
    ]
    assert every == [f"message {n}" for n in range(5)]  # the client follows `after` page by page
    newest = client.conversations.items.list(conversation.id, limit=2)  # desc by default
    assert [i.content[0].text for i in newest.data] == ["message 4", "message 3"]
    after = client.conversations.items.list(conversation.id, after=newest.data[-1].id, limit=10)
    assert [i.content[0].text for i in after.data] == [
        "message 2",
        "message 1",
        "message 0",
    ] and not after.has_more


def test_conversation_items_can_be_added_read_and_deleted(live, upstream):
    client = _client(live, upstream)
    conversation = client.conversations.create()
    added = client.conversations.items.create(
        conversation.id,
        items=[
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
            {"type": "function_call", "call_id": "call_9", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_9", "output": "sunny"},
        ],
    )
    assert [i.type for i in added.data] == ["message", "function_call", "function_call_output"]
    call = client.conversations.items.retrieve(added.data[1].id, conversation_id=conversation.id)
    assert call.type == "function_call" and call.call_id == "call_9"
    after_delete = client.conversations.items.delete(added.data[0].id, conversation_id=conversation.id)
    assert after_delete.id == conversation.id
    assert [i.type for i in client.conversations.items.list(conversation.id).data] == [
        "function_call_output",
        "function_call",
    ]
    with pytest.raises(openai.NotFoundError):
        client.conversations.items.retrieve(added.data[0].id, conversation_id=conversation.id)
    stored = entries(live, conversation.id)
    assert [(e["role"], e["committed"]) for e in stored] == [
        ("user", False),
        ("assistant", True),
        ("tool", True),
    ]


def test_conversation_metadata_follows_openais_limits_and_can_be_updated(live, upstream):
    client = _client(live, upstream)
    with pytest.raises(openai.BadRequestError) as caught:
        client.conversations.create(metadata={f"k{n}": "v" for n in range(17)})
    assert caught.value.body["param"] == "metadata"
    with pytest.raises(openai.BadRequestError):
        client.conversations.create(metadata={"k": "v" * 513})
    conversation = client.conversations.create(metadata={"a": "1"})
    updated = client.conversations.update(conversation.id, metadata={"b": "2"})
    assert updated.metadata == {"b": "2"} and client.conversations.retrieve(conversation.id).metadata == {
        "b": "2"
    }


def test_deleting_a_conversation_deletes_its_memory_with_a_receipt(live, upstream):
    client = _client(live, upstream)
    conversation = client.conversations.create(items=[{"type": "message", "role": "user", "content": "bye"}])
    raw = client.conversations.with_raw_response.delete(conversation.id)
    deleted = raw.parse()
    assert (
        deleted.deleted is True and deleted.id == conversation.id and deleted.object == "conversation.deleted"
    )
    assert raw.http_response.json()["receipt"]["memories"] == 1
    with pytest.raises(openai.NotFoundError) as caught:
        client.conversations.retrieve(conversation.id)
    assert set(caught.value.body) == {"message", "type", "param", "code"}
    with pytest.raises(openai.NotFoundError):
        client.responses.create(model="m", conversation=conversation.id, input="hello?")


def test_an_unknown_conversation_id_is_a_404_in_openais_shape(live, upstream):
    client = _client(live, upstream)
    for bad in ("conv_nope", "mem_doesnotexist00000000", "../etc"):
        with pytest.raises(openai.NotFoundError):
            client.conversations.retrieve(bad)


# --- provider-shaped errors everywhere under the two prefixes ----------------------------------------


def test_unknown_paths_answer_in_each_providers_error_shape(live, upstream):
    client = _client(live, upstream)
    with pytest.raises(openai.NotFoundError) as caught:
        client.models.list()
    assert set(caught.value.body) == {"message", "type", "param", "code"}
    assert "/chat/completions, /responses and /conversations" in caught.value.body["message"]
    claude = anthropic.Anthropic(base_url=live.url + "/v1/anthropic", api_key=live.key, max_retries=0)
    with pytest.raises(anthropic.NotFoundError) as got:
        claude.models.list()
    assert got.value.body["type"] == "error" and got.value.body["error"]["type"] == "not_found_error"
    assert "/v1/messages" in got.value.body["error"]["message"]
    wrong_method = httpx.get(
        live.url + "/v1/openai/responses", headers={"Authorization": f"Bearer {live.key}"}
    )
    assert wrong_method.status_code == 405 and set(wrong_method.json()["error"]) == {
        "message",
        "type",
        "param",
        "code",
    }


def test_a_wrong_key_is_an_authentication_error_on_responses_and_conversations(live, upstream):
    client = openai.OpenAI(base_url=live.url + "/v1/openai", api_key="tl_proj_notakey", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as caught:
        client.responses.create(model="m", input="hi")
    assert caught.value.body["type"] == "authentication_error"
    with pytest.raises(openai.AuthenticationError):
        client.conversations.create()
    assert not upstream.requests
