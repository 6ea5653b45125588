"""The Responses and Conversations routes in-process (Django's AsyncClient) against the real stub
socket: degraded mode, project scoping, body errors, and the pure translation pieces."""

from __future__ import annotations

import orjson
import pytest
from django.db import OperationalError
from django.test import AsyncClient, Client

from common.errors import InvalidRequest
from memories.models import Entry, Memory
from memories.policy import policy_parse
from proxy import services as proxy_services
from proxy.ids import Target, conversation_id, conversation_target, issued_id, issued_target
from proxy.protocols import anthropic_body, openai_body, without_reasoning
from proxy.responses import (
    forwardable,
    issued_response_id,
    items_to_messages,
    memory_of_response_id,
    output_message,
    responses_body,
)

RESPONSES = "/v1/openai/responses"


def _headers(cast, upstream, key=None, **extra) -> dict:
    return {
        "Authorization": f"Bearer {key or cast.key_a}",
        "X-Upstream-Base-Url": upstream.openai_url,
        "X-Upstream-Authorization": "sk-stub",
        **extra,
    }


async def _post(body, headers: dict):
    return await AsyncClient().post(
        RESPONSES, orjson.dumps(body), content_type="application/json", headers=headers
    )


@pytest.mark.django_db(transaction=True)
async def test_when_decorate_fails_the_call_is_forwarded_without_memory_references_and_marked(
    cast, upstream, monkeypatch
):
    def database_down(**kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(proxy_services, "memory_decorate", database_down)
    memory = await Memory.objects.acreate(project=cast.project_a)
    body = {"model": "m", "instructions": "Be brief.", "input": "hi", "conversation": memory.id}
    response = await _post(body, _headers(cast, upstream))
    assert response.status_code == 200 and response["X-Threadless-Degraded"] == "1"
    assert orjson.loads(response.content)["id"] == "resp_upstream_1"  # no memory: the upstream's own id
    sent = upstream.requests[-1].body
    assert sent == {"model": "m", "instructions": "Be brief.", "input": "hi", "store": False}
    assert await Entry.objects.filter(memory=memory).acount() == 0


@pytest.mark.django_db(transaction=True)
async def test_another_projects_response_id_and_conversation_are_unknown_here(cast, upstream):
    memory = await Memory.objects.acreate(project=cast.project_b)
    issued = issued_response_id(memory.id, "resp_x")
    response = await _post(
        {"model": "m", "input": "hi", "previous_response_id": issued}, _headers(cast, upstream)
    )
    assert response.status_code == 400
    assert orjson.loads(response.content)["error"]["code"] == "previous_response_not_found"
    response = await _post({"model": "m", "input": "hi", "conversation": memory.id}, _headers(cast, upstream))
    assert response.status_code == 404 and set(orjson.loads(response.content)["error"]) == {
        "message",
        "type",
        "param",
        "code",
    }
    assert not upstream.requests
    items = await AsyncClient().get(
        f"/v1/openai/conversations/{memory.id}/items", headers=_headers(cast, upstream)
    )
    assert items.status_code == 404
    retrieved = await AsyncClient().get(f"{RESPONSES}/{issued}", headers=_headers(cast, upstream))
    assert retrieved.status_code == 404 and memory.id not in retrieved.content.decode()
    assert "not issued by this Threadless proxy" in orjson.loads(retrieved.content)["error"]["message"]


@pytest.mark.django_db(transaction=True)
async def test_a_body_that_is_not_json_is_a_400_in_openais_shape(cast, upstream):
    response = await AsyncClient().post(
        RESPONSES, b"{nope", content_type="application/json", headers=_headers(cast, upstream)
    )
    assert response.status_code == 400
    error = orjson.loads(response.content)["error"]
    assert error["type"] == "invalid_request_error" and set(error) == {"message", "type", "param", "code"}


@pytest.mark.django_db(transaction=True)
def test_conversation_list_parameters_are_checked(cast, upstream):
    conversation = (
        Client()
        .post(
            "/v1/openai/conversations", {}, content_type="application/json", headers=_headers(cast, upstream)
        )
        .json()
    )
    for query in ("limit=0", "limit=101", "limit=x", "order=sideways"):
        answer = Client().get(
            f"/v1/openai/conversations/{conversation['id']}/items?{query}", headers=_headers(cast, upstream)
        )
        assert answer.status_code == 400 and answer.json()["error"]["param"] in ("limit", "order")
    too_many = Client().post(
        f"/v1/openai/conversations/{conversation['id']}/items",
        {"items": [{"role": "user", "content": "x"}] * 21},
        content_type="application/json",
        headers=_headers(cast, upstream),
    )
    assert too_many.status_code == 400 and too_many.json()["error"]["param"] == "items"


def test_an_issued_response_id_names_its_memory_and_cannot_be_forged(settings):
    issued = issued_response_id("mem_AbC123", "resp_upstream")
    assert memory_of_response_id(issued) == "mem_AbC123"
    assert issued == issued_response_id("mem_AbC123", "resp_upstream")  # stable for one response
    assert memory_of_response_id(issued.replace("AbC123", "AbC124")) is None
    assert memory_of_response_id("resp_abc") is None and memory_of_response_id(None) is None
    settings.SECRET_KEY = "another-install"
    assert memory_of_response_id(issued) is None


def test_an_issued_response_id_still_names_its_memory_after_a_secret_key_rotation(settings):
    settings.SECRET_KEY = "the-key-before-rotation"
    issued = issued_response_id("mem_AbC123", "resp_upstream")
    settings.SECRET_KEY = "the-key-after-rotation"
    settings.SECRET_KEY_FALLBACKS = ["an-older-key", "the-key-before-rotation"]
    assert memory_of_response_id(issued) == "mem_AbC123"
    assert issued_response_id("mem_AbC123", "resp_upstream") != issued  # new ids: the current key
    settings.SECRET_KEY_FALLBACKS = []  # the old key retired: its ids no longer verify
    assert memory_of_response_id(issued) is None


def test_function_calls_join_the_assistant_message_and_outputs_become_tool_messages():
    messages = items_to_messages(
        [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Checking."}],
            },
            {"type": "function_call", "call_id": "c1", "name": "w", "arguments": "{}"},
            {"type": "function_call", "call_id": "c2", "name": "w", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "sun"},
            {
                "type": "function_call_output",
                "call_id": "c2",
                "output": [{"type": "input_text", "text": "rain"}],
            },
        ]
    )
    assert [(m["role"], m["content"]) for m in messages] == [
        ("user", "Weather?"),
        ("assistant", "Checking."),
        ("tool", "sun"),
        ("tool", "rain"),
    ]
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["c1", "c2"]


def test_reasoning_goes_upstream_before_the_call_it_preceded():
    sent = [
        {"role": "user", "content": "Weather?"},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "call_id": "c1", "name": "w", "arguments": "{}", "id": "fc_1"},
        {"type": "function_call_output", "call_id": "c1", "output": "sun"},
    ]
    window = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sun"},
    ]
    body = responses_body({"model": "m", "input": sent}, instructions="Be brief.", messages=window)
    assert [i["type"] for i in body["input"]] == [
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
    ]
    assert body["instructions"] == "Be brief." and body["store"] is False
    assert "id" not in body["input"][2]


def test_the_caller_keeps_store_and_its_item_ids_when_it_asks_the_upstream_to_store():
    body = forwardable(
        {
            "input": [{"role": "user", "content": "x", "id": "msg_1"}],
            "store": True,
            "previous_response_id": "resp_tlx",
            "conversation": "mem_x",
        }
    )
    assert body == {"input": [{"role": "user", "content": "x", "id": "msg_1"}], "store": True}


def test_output_items_become_one_assistant_message_with_reasoning_as_parts_where_it_stood():
    reasoning = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "think"}],
        "encrypted_content": "opaque",
    }
    message = output_message(
        [
            reasoning,
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Hi"}, {"type": "output_text", "text": "."}],
            },
            {"type": "function_call", "call_id": "c1", "name": "w", "arguments": '{"a": 1}'},
        ]
    )
    calls = [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": '{"a": 1}'}}]
    assert message == {
        "role": "assistant",
        "content": [reasoning, {"type": "text", "text": "Hi."}],
        "tool_calls": calls,
    }
    assert without_reasoning(message) == {"role": "assistant", "content": "Hi.", "tool_calls": calls}
    assert output_message(
        [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "plain"}]}]
    ) == {"role": "assistant", "content": "plain"}


def test_a_kept_reasoning_item_goes_back_upstream_in_its_place_and_only_once():
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "opaque"}
    window = [
        {"role": "user", "content": "Weather?"},
        {
            "role": "assistant",
            "content": [reasoning],
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sun"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Sunny."}, {**reasoning, "id": "rs_2"}],
            "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "w", "arguments": "{}"}}],
        },
    ]
    # the caller resends the reasoning item too (the Agents SDK without a session does): not twice
    sent = [
        {"role": "user", "content": "Weather?"},
        reasoning,
        {"type": "function_call", "call_id": "c1", "name": "w", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "sun"},
    ]
    items = responses_body({"model": "m", "input": sent}, instructions="", messages=window)["input"]
    assert [(i["type"], i.get("id")) for i in items] == [
        ("message", None),
        ("reasoning", "rs_1"),
        ("function_call", None),
        ("function_call_output", None),
        ("message", None),
        ("reasoning", "rs_2"),
        ("function_call", None),
    ]
    assert items[1] == reasoning and items[4]["content"] == [{"type": "output_text", "text": "Sunny."}]


def test_chat_completions_and_messages_never_get_a_reasoning_part():
    window = [
        {"role": "user", "content": "Hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {"type": "text", "text": "Hello."},
            ],
        },
    ]
    assert openai_body({"model": "m"}, instructions="", messages=window)["messages"][1] == {
        "role": "assistant",
        "content": "Hello.",
    }
    assert anthropic_body({"model": "m"}, instructions="", messages=window)["messages"][1] == {
        "role": "assistant",
        "content": "Hello.",
    }


def test_the_reasoning_items_policy_is_validated_and_left_out_while_default():
    assert policy_parse({"reasoningItems": "keep"}).as_json()["reasoningItems"] == "keep"
    assert "reasoningItems" not in policy_parse({"reasoningItems": "drop"}).as_json()
    with pytest.raises(InvalidRequest, match=r"policy.reasoningItems: must be one of drop, keep"):
        policy_parse({"reasoningItems": True})


@pytest.mark.django_db
def test_the_reasoning_items_policy_is_set_through_the_memories_api(cast):
    http = Client(headers={"Authorization": f"Bearer {cast.key_a}"})
    memory = http.post(
        "/v1/memories", {"policy": {"reasoningItems": "keep"}}, content_type="application/json"
    )
    assert memory.status_code == 201 and memory.json()["policy"]["reasoningItems"] == "keep"
    bad = http.patch(
        f"/v1/memories/{memory.json()['id']}",
        {"policy": {"reasoningItems": "sometimes"}},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "policy.reasoningItems" in bad.json()["error"]["message"]


def test_a_conversation_is_named_by_its_memory_id_or_openais_conv_spelling_of_it():
    assert conversation_target("mem_AbC1") == conversation_target("conv_AbC1") == Target("mem_AbC1", None)
    assert conversation_target({"id": "conv_AbC1"}) == Target("mem_AbC1", None)
    assert conversation_target("../etc") is None and conversation_target(7) is None


def test_a_threads_conversation_and_issued_ids_name_memory_and_thread():
    named = conversation_id("mem_AbC1", "chat 7 – ümlaut")
    assert named.startswith("conv_AbC1_") and conversation_target(named) == Target(
        "mem_AbC1", "chat 7 – ümlaut"
    )
    assert conversation_id("mem_AbC1", "default") == "mem_AbC1"
    assert conversation_target("conv_AbC1_%%") is None and conversation_target("conv_AbC1_AA") is None
    issued = issued_id("msg", "mem_AbC1", "msg_up", 3, "chat-7")
    assert issued_target("msg", issued) == Target("mem_AbC1", "chat-7")
    assert issued_target("resp", issued) is None  # a message id is no response id
    forged = issued[: issued.rindex("t")] + "t" + "Y2hhdC04"  # the same id naming another thread
    assert issued_target("msg", forged) is None


def _frame(kind: str, **data) -> str:
    return f"event: {kind}\ndata: {orjson.dumps({'type': kind, **data}).decode()}\n\n"


async def _streamed(body, headers) -> tuple[str, str]:
    response = await _post({**body, "stream": True}, headers)
    text = b"".join([chunk async for chunk in response.streaming_content]).decode()
    return response["X-Threadless-Memory"], text


@pytest.mark.django_db(transaction=True)
async def test_a_stream_event_with_a_malformed_index_still_stores_the_reply(cast, upstream):
    delta = "response.output_text.delta"
    upstream.push(
        frames=[
            _frame(delta, output_index="zzz", content_index=0, delta="Hel"),
            _frame(delta, output_index=0, content_index=[], delta="lo"),
            _frame("response.completed", response={"id": "resp_1", "status": "completed", "output": []}),
        ]
    )
    memory_id, text = await _streamed(
        {"model": "m", "input": "hi"}, _headers(cast, upstream, **{"X-Threadless-External-Id": "u1"})
    )
    assert "response.completed" in text
    said = [e.content async for e in Entry.objects.filter(memory_id=memory_id, role="assistant")]
    assert said == ["Hello"]


@pytest.mark.django_db(transaction=True)
async def test_an_event_the_proxy_cannot_read_ends_the_stream_with_an_error_and_a_failed_turn(
    cast, upstream, monkeypatch
):
    """Whatever goes wrong while a stream is read, the client gets an error event and the turn
    keeps the part received, marked cut off, and the failure."""
    from proxy.responses import ResponsesStream

    feed = ResponsesStream.feed

    def feed_that_breaks(self, event, data):
        if "BREAK" in data:
            raise ValueError("an accumulator bug")
        feed(self, event, data)

    monkeypatch.setattr(ResponsesStream, "feed", feed_that_breaks)
    delta = "response.output_text.delta"
    upstream.push(
        frames=[
            _frame(delta, output_index=0, content_index=0, delta="Half "),
            _frame(delta, output_index=0, content_index=0, delta="BREAK"),
            _frame("response.completed", response={"id": "resp_1", "status": "completed", "output": []}),
        ]
    )
    memory_id, text = await _streamed(
        {"model": "m", "input": "hi"}, _headers(cast, upstream, **{"X-Threadless-External-Id": "u2"})
    )
    assert text.rstrip().splitlines()[-1].startswith("data: ") and '"error"' in text.rstrip().splitlines()[-1]
    assert "response.completed" not in text and "accumulator bug" not in text
    stored = [(e.kind, e.content) async for e in Entry.objects.filter(memory_id=memory_id).order_by("seq")]
    assert ("message", "Half \n\n[cut off: the upstream stream ended early]") in stored
    assert any(kind == "error" and "could not be read" in content for kind, content in stored)
