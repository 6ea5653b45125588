"""Threads through the proxy (SPEC 4.8, 4.10), with the real `openai` and `anthropic` clients against
the live server and the provider stub: `X-Threadless-Thread`, a Responses `previous_response_id`, a
conversation opened in a subject's memory, and Anthropic's server-side thread continuation."""

from __future__ import annotations

import json
import uuid
from types import SimpleNamespace

import anthropic
import httpx2
import openai
import pytest

from proxy.ids import Target, issued_target
from proxy.messages import MESSAGES
from tests.proxy.conftest import entries, wait_for

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _openai(live, upstream, **headers) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=live.url + "/v1/openai",
        api_key=live.key,
        default_headers={
            "X-Upstream-Base-Url": upstream.openai_url,
            "X-Upstream-Authorization": "Bearer sk-stub-openai",
            **headers,
        },
        max_retries=0,
        timeout=30,
    )


def _user() -> str:
    return "user-" + uuid.uuid4().hex[:8]


def _said(live, memory_id: str) -> list[tuple]:
    return [
        (e["thread"], e["role"], e["content"]) for e in entries(live, memory_id) if e["kind"] == "message"
    ]


def test_two_threads_keep_their_own_windows_and_share_what_was_learned(live, upstream):
    user = _user()
    work = _openai(live, upstream, **{"X-Threadless-External-Id": user, "X-Threadless-Thread": "work"})
    raw = work.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "My name is Ada and I live in Lisbon."}]
    )
    memory_id = raw.headers["x-threadless-memory"]

    def facts():
        with live.client() as http:
            return [f["text"] for f in http.get(f"/memories/{memory_id}/facts").json()["data"]]

    assert any("Ada" in fact for fact in wait_for(facts, timeout=240))
    home = _openai(live, upstream, **{"X-Threadless-External-Id": user, "X-Threadless-Thread": "home"})
    again = home.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "What should I cook tonight?"}]
    )
    assert again.headers["x-threadless-memory"] == memory_id and again.headers["x-threadless-turn"] == "1"
    sent = upstream.requests[-1].body["messages"]
    assert "Ada" in sent[0]["content"]  # the fact learned in "work", in the instructions
    assert [m["content"] for m in sent[1:]] == ["What should I cook tonight?"]  # only home's window
    assert _said(live, memory_id) == [
        ("work", "user", "My name is Ada and I live in Lisbon."),
        ("work", "assistant", "Hello from the stub."),
        ("home", "user", "What should I cook tonight?"),
        ("home", "assistant", "Hello from the stub."),
    ]


def test_previous_response_id_continues_in_the_thread_it_came_from(live, upstream):
    user = _user()
    first = _openai(live, upstream, **{"X-Threadless-External-Id": user, "X-Threadless-Thread": "t1"})
    one = first.responses.with_raw_response.create(model="m", input="My name is Ana.")
    _openai(
        live, upstream, **{"X-Threadless-External-Id": user, "X-Threadless-Thread": "t2"}
    ).responses.create(model="m", input="Unrelated.")
    plain = _openai(live, upstream, **{"X-Threadless-Thread": "t2"})  # the id wins over the header
    two = plain.responses.with_raw_response.create(
        model="m", input="What is my name?", previous_response_id=one.parse().id
    )
    assert two.headers["x-threadless-memory"] == one.headers["x-threadless-memory"]
    assert two.headers["x-threadless-turn"] == "2"
    assert [(i["role"], i["content"]) for i in upstream.requests[-1].body["input"]] == [
        ("user", "My name is Ana."),
        ("assistant", "Hello from the stub."),
        ("user", "What is my name?"),
    ]
    said = _said(live, one.headers["x-threadless-memory"])
    assert [s for s in said if s[0] == "t1"][-2:] == [
        ("t1", "user", "What is my name?"),
        ("t1", "assistant", "Hello from the stub."),
    ]


def test_a_conversation_opened_with_an_external_id_is_a_new_thread_of_that_memory(live, upstream):
    user = _user()
    client = _openai(live, upstream, **{"X-Threadless-External-Id": user})
    plain = client.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "I keep bees."}]
    )
    memory_id = plain.headers["x-threadless-memory"]
    one, two = client.conversations.create(), client.conversations.create()
    assert one.id != two.id and one.id.startswith("conv_") and memory_id[4:] in one.id
    bare = _openai(live, upstream)  # the conversation names memory and thread: no header needed
    bare.responses.create(model="m", input="Hello, first conversation.", conversation=one.id)
    bare.conversations.items.create(two.id, items=[{"role": "user", "content": "Second one here."}])
    said = _said(live, memory_id)
    assert len({s[0] for s in said}) == 3  # the default thread and the two conversations
    items = [i.content[0].text for i in bare.conversations.items.list(one.id, order="asc").data]
    assert items == ["Hello, first conversation.", "Hello from the stub."]
    assert upstream.requests[-1].body["input"] == [
        {"type": "message", "role": "user", "content": "Hello, first conversation."}
    ]
    bare.conversations.delete(one.id)  # the thread goes; the memory and its other threads stay
    with pytest.raises(openai.NotFoundError):
        bare.conversations.retrieve(one.id)
    assert {s[2] for s in _said(live, memory_id)} == {
        "I keep bees.",
        "Hello from the stub.",
        "Second one here.",
    }


def test_an_anthropic_thread_continuation_sends_the_history_upstream_once(live, upstream):
    sent = []  # what the client itself sends

    def record(request):
        sent.append(json.loads(request.content))

    client = anthropic.Anthropic(
        base_url=live.url + "/v1/anthropic",
        api_key=live.key,
        default_headers={
            "X-Upstream-Base-Url": upstream.anthropic_url,
            "X-Upstream-Authorization": "sk-ant-stub-key",
            "X-Threadless-External-Id": _user(),
        },
        max_retries=0,
        timeout=30,
        http_client=httpx2.Client(event_hooks={"request": [record]}),
    )

    @anthropic.beta_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"Sunny in {city}"

    final = client.beta.messages.tool_runner(
        model="claude-sonnet-5-5",
        max_tokens=100,
        system="Be brief.",
        tools=[get_weather],
        messages=[{"role": "user", "content": "Weather in Paris?"}],
    ).until_done()
    assert final.content[0].text == "The tool said: Sunny in Paris"
    assert [body["thread"]["type"] for body in sent] == ["create", "continue"]
    assert sent[1]["thread"]["previous_message_id"].startswith("msg_tl")  # an id this proxy issued
    assert len(sent[1]["messages"]) == 1 and "tools" not in sent[1] and "system" not in sent[1]
    first, second = (r.body for r in upstream.requests[-2:])
    assert "thread" not in first and "thread" not in second
    assert second["tools"] == first["tools"] and second["system"].startswith("Be brief.")
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]  # the history once
    assert second["messages"][0]["content"] == "Weather in Paris?"

    with pytest.raises(anthropic.BadRequestError) as caught:
        client.beta.messages.create(
            model="m",
            max_tokens=10,
            messages=[{"role": "user", "content": "hi"}],
            thread={"type": "continue", "previous_message_id": "msg_01upstream"},
        )
    assert caught.value.body["error"]["details"] == {"error_code": "thread_not_found"}


def test_a_streamed_message_start_carries_an_id_naming_memory_and_thread():
    call = SimpleNamespace(
        issues_ids=True, memory=SimpleNamespace(id="mem_AbC1"), degraded=False, turn=2, thread="t"
    )
    frame = b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_up","content":[]}}'
    issued = json.loads(MESSAGES.answer_frame(frame, call).split(b"data: ")[1])["message"]["id"]
    assert issued_target("msg", issued) == Target("mem_AbC1", "t")
    assert MESSAGES.answer_frame(frame, SimpleNamespace(**{**vars(call), "issues_ids": False})) == frame


@pytest.mark.django_db
def test_deleting_a_thread_drops_the_fields_held_for_its_anthropic_thread(cast):
    from memories import services
    from proxy.models import MessagesThread

    memory, _ = services.memory_create(project=cast.project_a)
    for name in ("trip", "work"):
        MessagesThread.objects.create(memory=memory, thread=name, fields={"system": "Be brief."})
    services.thread_delete(memory=memory, name="trip")
    assert list(MessagesThread.objects.filter(memory=memory).values_list("thread", flat=True)) == ["work"]
