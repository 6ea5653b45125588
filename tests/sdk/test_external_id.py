"""decorate / report by the app's own id (external_id): no create call, and a new user's first turn
still gets an answer while the service is down (the tail is keyed by the external id)."""

from __future__ import annotations

import uuid

import pytest
from threadless import AsyncThreadless, Threadless, ThreadlessError

from .faults import Respond, error_body

USER = [{"role": "user", "content": "Hi, I'm Ada."}]


def _sync(url, errors, timeout=0.5):
    return Threadless(api_key="tl_proj_test", base_url=url, timeout=timeout, on_error=errors)


def _async(url, errors, timeout=0.5):
    return AsyncThreadless(api_key="tl_proj_test", base_url=url, timeout=timeout, on_error=errors)


def test_a_brand_new_user_during_an_outage_still_gets_a_request_from_decorate(refused_url, errors):
    with _sync(refused_url, errors) as memory:
        req = memory.decorate(external_id="user-42", messages=USER, instructions="Be kind.")
        memory.report(external_id="user-42", messages=[{"role": "assistant", "content": "Hello Ada!"}])
        assert memory.flush(2)
    assert req.degraded is True
    assert (req.instructions, req.messages) == ("Be kind.", USER)
    assert (req.memory_id, req.external_id) == (None, "user-42")
    # One fallback told; the report after it is skipped (its user message was never stored).
    assert errors.contexts == [{"operation": "decorate", "memory_id": None, "external_id": "user-42"}]


async def test_the_async_client_answers_a_brand_new_user_during_an_outage(refused_url, errors):
    async with _async(refused_url, errors) as memory:
        req = await memory.decorate(external_id="user-42", messages=USER, instructions="Be kind.")
        assert memory.report(external_id="user-42", messages=[{"role": "assistant", "content": "Hi"}]) is None
    assert req.degraded and req.messages == USER
    assert errors.contexts == [{"operation": "decorate", "memory_id": None, "external_id": "user-42"}]


def _external_service(state: dict):
    def respond(request):
        if not state["up"]:
            return Respond(503, error_body("unavailable", "Down."))
        if request.path.endswith("/report"):
            return Respond(202, {"accepted": 1, "turn": 1})
        body = request.body
        return Respond(
            200,
            {
                "memory_id": "mem_srv",
                "turn": 1,
                "instructions": body.get("instructions", ""),
                "context_text": "",
                "messages": body["messages"],
                "context": {},
                "usage": {},
            },
        )

    return respond


def test_decorate_and_report_by_external_id_use_the_get_or_create_routes_and_one_tail(fault, errors):
    state = {"up": True}
    fault.responder = _external_service(state)
    with _sync(fault.url, errors) as memory:
        first = memory.decorate(external_id="tenant/ü 1", messages=USER, instructions="Be kind.")
        memory.report(external_id="tenant/ü 1", messages=[{"role": "assistant", "content": "Hello Ada!"}])
        assert memory.flush(2)
        state["up"] = False
        second = memory.decorate(external_id="tenant/ü 1", messages=[{"role": "user", "content": "Again?"}])
    assert fault.paths("POST")[:2] == [
        "/v1/memories/external/tenant%2F%C3%BC%201/decorate",
        "/v1/memories/external/tenant%2F%C3%BC%201/report",
    ]
    assert first.memory_id == "mem_srv" and not first.degraded
    assert second.degraded
    assert second.memory_id == "mem_srv"  # learnt from the successful decorate
    assert [m["content"] for m in second.messages] == ["Hi, I'm Ada.", "Hello Ada!", "Again?"]
    assert second.instructions == "Be kind."


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"memory_id": "mem_1", "external_id": "u1"}, {"external_id": ""}],
    ids=["neither", "both", "empty"],
)
def test_decorate_needs_exactly_one_of_memory_id_and_external_id(refused_url, errors, kwargs):
    with _sync(refused_url, errors) as memory:
        with pytest.raises(ThreadlessError) as info:
            memory.decorate(messages=USER, **kwargs)
    assert info.value.code == "invalid_request"
    assert errors.calls == []


def test_report_with_neither_id_goes_to_on_error_and_does_not_raise(refused_url, errors):
    with _sync(refused_url, errors) as memory:
        memory.report(messages=[{"role": "assistant", "content": "x"}])
    assert [e.code for e in errors.errors] == ["invalid_request"]


@pytest.mark.live
def test_a_live_server_creates_the_memory_on_the_first_decorate_by_external_id(live_server_proc, errors):
    external = "user-" + uuid.uuid4().hex
    with Threadless(api_key=live_server_proc.key, base_url=live_server_proc.url, on_error=errors) as memory:
        first = memory.decorate(external_id=external, messages=[{"role": "user", "content": "I like tea."}])
        memory.report(external_id=external, messages=[{"role": "assistant", "content": "Noted: tea."}])
        second = memory.decorate(
            external_id=external, messages=[{"role": "user", "content": "What do I like?"}]
        )
        found = memory.list(external_id=external)
    assert not first.degraded and not second.degraded
    assert [m.id for m in found] == [first.memory_id] == [second.memory_id]
    assert [m["content"] for m in second.messages] == ["I like tea.", "Noted: tea.", "What do I like?"]
    assert errors.calls == []
