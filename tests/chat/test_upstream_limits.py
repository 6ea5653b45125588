"""What a hostile upstream can cost a turn's tasks: the llm task and http_call read at most the caps
(decoded, gzip included) and fail with a reason that says so; a long reply is stored cut."""

from __future__ import annotations

import pytest

from chat import runner, services
from harness.hostile import HostileUpstream, big_json, gzip_bomb, peak_reset, peak_rss
from memories.models import Entry

pytestmark = pytest.mark.django_db
MiB = 1024 * 1024
LLM_FAILED = "Task 'eddi://ai.labs.llm' failed: "


@pytest.fixture(scope="module")
def hostile():
    upstream = HostileUpstream()
    yield upstream
    upstream.close()


def _llm(hostile, **extra) -> dict:
    return {
        "id": "eddi://ai.labs.llm",
        "type": "llm",
        "provider": "openai",
        "model": "m",
        "baseUrl": hostile.url + "/v1",
        **extra,
    }


def _say(make_agent, workflow: list[dict], *, stream: bool = False) -> tuple[dict, object]:
    agent = make_agent({"workflow": workflow})
    conversation, _ = services.conversation_create(agent=agent)
    if not stream:
        return services.turn_say(conversation=conversation, text="hi"), conversation
    handle = runner.turn_begin(conversation=conversation, text="hi")
    return runner.turn_execute(handle=handle, stream=True, listener=lambda _e: None), conversation


def test_an_llm_call_answered_by_a_gzip_bomb_fails_at_the_cap_without_inflating_it(make_agent, hostile):
    hostile.serve("gzip", gzip_bomb(256))
    before = peak_reset()
    snap, _ = _say(make_agent, [_llm(hostile)])
    assert [e["text"] for e in snap["taskErrors"]] == [
        LLM_FAILED + "Chat model execution failed: the upstream answer is larger than 8 MiB"
    ]
    assert peak_rss() - before < 64 * MiB  # 256 MiB on offer


def test_an_llm_call_answered_with_30_mib_of_json_fails_at_the_cap(make_agent, hostile):
    hostile.serve("json", big_json(30))
    snap, conversation = _say(make_agent, [_llm(hostile)])
    assert snap["taskErrors"][0]["text"].endswith("the upstream answer is larger than 8 MiB")
    assert not Entry.objects.filter(memory=conversation.memory, role="assistant").exists()


def test_a_streamed_llm_call_sent_an_endless_line_stops_at_the_frame_cap(make_agent, hostile):
    hostile.serve("endless_line", 64)
    snap, _ = _say(make_agent, [_llm(hostile)], stream=True)
    assert [e["text"] for e in snap["taskErrors"]] == [
        LLM_FAILED + "Streaming chat failed: the upstream stream frame is larger than 4 MiB"
    ]
    assert hostile.peer_closed.wait(15) and hostile.sent < 40 * MiB


def test_a_long_llm_reply_within_the_read_cap_is_stored_cut_with_a_marker(make_agent, hostile, settings):
    hostile.serve("json", big_json(3))
    snap, conversation = _say(make_agent, [_llm(hostile)])
    limit = settings.THREADLESS_MAX_BODY_BYTES
    reply = Entry.objects.get(memory=conversation.memory, role="assistant").content
    assert reply.endswith(f"\n\n[cut off: the reply was longer than {limit:,} characters]")
    assert len(reply) < limit + 100 and snap["output"][0]["text"] == reply


def test_the_read_cap_is_a_setting(make_agent, hostile, settings):
    settings.THREADLESS_UPSTREAM_MAX_BYTES = 64 * 1024
    hostile.serve("json", big_json(0.1))
    snap, _ = _say(make_agent, [_llm(hostile)])
    assert snap["taskErrors"][0]["text"].endswith("the upstream answer is larger than 64 KiB")


@pytest.mark.parametrize("answer", ["gzip_bomb", "30_mib_json"])
def test_an_http_call_answered_past_the_cap_fails_and_stores_nothing(make_agent, hostile, answer):
    hostile.serve(*(("gzip", gzip_bomb(256)) if answer == "gzip_bomb" else ("json", big_json(30))))
    before = peak_reset()
    snap, conversation = _say(
        make_agent,
        [
            {
                "id": "fetch",
                "type": "http_call",
                "storeAs": "fetched",
                "request": {"url": hostile.url + "/data"},
            }
        ],
    )
    host = hostile.url.removeprefix("http://")
    assert [e["text"] for e in snap["taskErrors"]] == [
        f"Task 'fetch' failed: API call to {host} failed: the upstream answer is larger than 1 MiB"
    ]
    assert not Entry.objects.filter(memory=conversation.memory, kind="data").exists()
    assert peak_rss() - before < 64 * MiB
