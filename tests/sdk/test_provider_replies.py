"""Handing a provider's reply back as it is: OpenAI's message fields are accepted by the server, and
report_openai / report_anthropic take the real `openai` / `anthropic` response objects."""

from __future__ import annotations

import uuid

import pytest
from anthropic.types import Message as AnthropicMessage
from openai.types.chat import ChatCompletion
from threadless import AsyncThreadless, Threadless

from tests.fixtures.api import error_of, report

from .faults import Respond, echo_decorate


def completion(message: dict) -> ChatCompletion:
    return ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "gpt-4o-mini",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "logprobs": None,
                    "message": {"role": "assistant", "refusal": None, "annotations": [], **message},
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        }
    )


def anthropic_message(content: list) -> AnthropicMessage:
    return AnthropicMessage.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 5, "output_tokens": 2},
            "content": content,
        }
    )


WEATHER_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "weather", "arguments": '{"city":"Lyon"}'},
}


# --- the server accepts OpenAI's assistant message as it is -------------------------------------


@pytest.mark.django_db
def test_the_server_accepts_an_openai_message_dump_with_refusal_annotations_audio_and_function_call(cast):
    from memories import services
    from memories.models import Entry

    memory, _ = services.memory_create(project=cast.project_a)
    dumped = completion({"content": "Hello!"}).choices[0].message.model_dump()
    assert {"refusal", "annotations", "audio", "function_call"} <= set(dumped)  # what the real SDK sends
    answer = report(cast.a, memory.id, [dumped])
    assert answer.status_code == 202, answer.content
    assert [(e.role, e.content) for e in Entry.objects.filter(memory=memory)] == [("assistant", "Hello!")]


@pytest.mark.django_db
def test_openai_fields_on_a_user_message_and_other_unknown_fields_are_still_a_400(cast):
    from memories import services

    memory, _ = services.memory_create(project=cast.project_a)
    answer = report(cast.a, memory.id, [{"role": "user", "content": "hi", "refusal": None}])
    assert "messages[0].refusal" in error_of(answer, 400, "invalid_request")["message"]
    answer = report(cast.a, memory.id, [{"role": "assistant", "content": "hi", "reasoning": "x"}])
    assert "messages[0].reasoning" in error_of(answer, 400, "invalid_request")["message"]


# --- report_openai / report_anthropic -----------------------------------------------------------


def _recording(fault):
    def respond(request):
        if request.path.endswith("/report"):
            return Respond(202, {"accepted": 1, "turn": 1})
        return echo_decorate(request)

    fault.responder = respond
    return lambda: [r.body for r in fault.requests if r.path.endswith("/report")]


def test_report_openai_sends_the_reply_of_a_real_chat_completion(fault, errors):
    sent = _recording(fault)
    with Threadless(api_key="tl_proj_test", base_url=fault.url, on_error=errors) as memory:
        memory.report_openai("mem_1", completion({"content": "Hello!"}))
        memory.report_openai(
            "mem_1", completion({"content": None, "tool_calls": [WEATHER_CALL]}).choices[0].message
        )
        memory.report_openai("mem_1", completion({"content": None, "refusal": "I can't help with that."}))
        assert memory.flush(5)
    assert [b["messages"] for b in sent()] == [
        [{"role": "assistant", "content": "Hello!"}],
        [{"role": "assistant", "content": "", "tool_calls": [WEATHER_CALL]}],
        [{"role": "assistant", "content": "I can't help with that."}],  # what the user was shown
    ]
    assert errors.calls == []


def test_report_anthropic_sends_text_and_tool_use_of_a_real_message(fault, errors):
    sent = _recording(fault)
    message = anthropic_message(
        [
            {"type": "thinking", "thinking": "The user wants weather.", "signature": "sig"},
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Lyon"}},
        ]
    )
    with Threadless(api_key="tl_proj_test", base_url=fault.url, on_error=errors) as memory:
        memory.report_anthropic(external_id="user-1", message=message)
        assert memory.flush(5)
    assert fault.paths("POST") == ["/v1/memories/external/user-1/report"]
    assert sent()[0]["messages"] == [
        {
            "role": "assistant",
            "content": "Let me check.",
            "tool_calls": [
                {
                    "id": "toolu_1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city":"Lyon"}'},
                }
            ],
        }
    ]


async def test_the_async_client_reports_provider_objects_too(fault, errors):
    sent = _recording(fault)
    async with AsyncThreadless(api_key="tl_proj_test", base_url=fault.url, on_error=errors) as memory:
        memory.report_openai("mem_1", completion({"content": "One"}))
        memory.report_anthropic("mem_1", anthropic_message([{"type": "text", "text": "Two"}]))
        assert await memory.flush(5)
    assert [b["messages"][0]["content"] for b in sent()] == ["One", "Two"]


def test_something_that_is_not_a_provider_answer_goes_to_on_error_and_does_not_raise(fault, errors):
    with Threadless(api_key="tl_proj_test", base_url=fault.url, on_error=errors) as memory:
        memory.report_openai("mem_1", "Hello!")
        memory.report_anthropic("mem_1", 42)
    assert [(c["operation"], e.code) for e, c in errors.calls] == [("report", "invalid_request")] * 2
    assert fault.paths() == []


@pytest.mark.live
def test_provider_replies_reach_a_live_server_and_come_back_in_the_next_decorate(live_server_proc, errors):
    external = "user-" + uuid.uuid4().hex
    with Threadless(api_key=live_server_proc.key, base_url=live_server_proc.url, on_error=errors) as memory:
        memory.decorate(external_id=external, messages=[{"role": "user", "content": "Weather in Lyon?"}])
        memory.report_openai(
            external_id=external, completion=completion({"content": None, "tool_calls": [WEATHER_CALL]})
        )
        memory.report(
            external_id=external, messages=[{"role": "tool", "tool_call_id": "call_1", "content": "Sunny"}]
        )
        memory.report_anthropic(
            external_id=external, message=anthropic_message([{"type": "text", "text": "Sunny."}])
        )
        # The raw dump of OpenAI's message, unchanged, is accepted too.
        memory.report(
            external_id=external,
            messages=[completion({"content": "Anything else?"}).choices[0].message.model_dump()],
        )
        req = memory.decorate(external_id=external, messages=[{"role": "user", "content": "Thanks"}])
    assert errors.calls == []
    assert [(m["role"], m["content"]) for m in req.messages] == [
        ("user", "Weather in Lyon?"),
        ("assistant", ""),
        ("tool", "Sunny"),
        ("assistant", "Sunny."),
        ("assistant", "Anything else?"),
        ("user", "Thanks"),
    ]
    assert req.messages[1]["tool_calls"] == [WEATHER_CALL]
