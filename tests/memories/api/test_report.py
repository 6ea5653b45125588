"""POST /v1/memories/{id}/report (SPEC 4.4) and its failures under each policy (SPEC 6.2, 6.3)."""

from __future__ import annotations

import pytest

from memories import services
from memories.models import Entry, ErrorDigest, Outbox
from tests.fixtures.api import decorate, error_of, post, report

RAW = "java.net.ConnectException: Connection refused to https://pay.example.com/v1 with api_key=abc123secret"


def policy(mode: str) -> dict:
    if mode == "off":
        return {"strictWriteDiscipline": {"enabled": False}}
    return {"strictWriteDiscipline": {"enabled": True, "onFailure": mode}}


def rows(memory):
    return [(e.kind, e.committed) for e in Entry.objects.filter(memory=memory).order_by("seq")]


def test_report_answers_202_with_what_it_accepted_and_joins_the_newest_turn(cast, memory_a):
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}])
    response = report(cast.a, memory_a.id, [{"role": "assistant", "content": "hello"}])
    assert response.status_code == 202
    assert response.json() == {"accepted": 1, "turn": 1, "task_errors": []}
    stored = list(Entry.objects.filter(memory=memory_a).order_by("seq"))
    assert [(e.role, e.turn, e.committed) for e in stored] == [("user", 1, True), ("assistant", 1, True)]


def test_report_is_durable_when_202_is_answered_and_queues_background_work_in_the_same_write(cast, memory_a):
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}])
    report(
        cast.a,
        memory_a.id,
        [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "42"},
            {"role": "assistant", "content": "It is 42."},
        ],
    )
    assert Entry.objects.filter(memory=memory_a).count() == 4
    outbox = Outbox.objects.get(memory=memory_a)
    assert outbox.payload == {"from_seq": 1, "to_seq": 4}
    assert outbox.processed_at is None
    assert cast.a.get(f"/v1/memories/{memory_a.id}").json()["processing"] == "pending"


def test_a_system_message_in_a_report_is_not_stored(cast, memory_a):
    response = report(
        cast.a, memory_a.id, [{"role": "system", "content": "x"}, {"role": "assistant", "content": "a"}]
    )
    assert response.json()["accepted"] == 1
    assert [e.role for e in Entry.objects.filter(memory=memory_a)] == ["assistant"]


def test_an_empty_report_is_a_400(cast, memory_a):
    error = error_of(report(cast.a, memory_a.id, []), 400, "invalid_request")
    assert error["message"].startswith("messages")


def test_an_idempotency_key_replays_the_first_answer_and_stores_nothing_twice(cast, memory_a):
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}])
    body = {
        "messages": [{"role": "assistant", "content": "hello"}],
        "failures": [{"task_id": "t", "error": "boom"}],
    }
    first = post(cast.a, f"/v1/memories/{memory_a.id}/report", body, **{"Idempotency-Key": "rep-1"})
    second = post(cast.a, f"/v1/memories/{memory_a.id}/report", body, **{"Idempotency-Key": "rep-1"})
    assert first.status_code == second.status_code == 202
    assert first.content == second.content
    assert Entry.objects.filter(memory=memory_a, role="assistant").count() == 1
    assert Entry.objects.filter(memory=memory_a, kind="error").count() == 1
    assert Outbox.objects.filter(memory=memory_a).count() == 1
    # The key is scoped to the memory: another memory stores its own report.
    other, _ = services.memory_create(project=cast.project_a)
    assert (
        post(cast.a, f"/v1/memories/{other.id}/report", body, **{"Idempotency-Key": "rep-1"}).status_code
        == 202
    )
    assert Entry.objects.filter(memory=other).count() == 2


def test_a_bad_idempotency_key_is_a_400(cast, memory_a):
    response = post(
        cast.a,
        f"/v1/memories/{memory_a.id}/report",
        {"messages": [{"role": "assistant", "content": "a"}]},
        **{"Idempotency-Key": "x" * 201},
    )
    assert error_of(response, 400, "invalid_request")["message"].startswith("Idempotency-Key")


@pytest.mark.parametrize(
    "failure,field",
    [
        ("boom", "failures[0]"),
        ({"task_id": "t"}, "failures[0].error"),
        ({"task_id": "t", "error": ""}, "failures[0].error"),
        ({"task_id": "has space", "error": "x"}, "failures[0].task_id"),
        ({"task_id": "t", "error": "x", "stack": "y"}, "failures[0].stack"),
    ],
)
def test_a_bad_failure_is_a_400_naming_its_path(cast, memory_a, failure, field):
    response = report(cast.a, memory_a.id, [], failures=[failure])
    assert error_of(response, 400, "invalid_request")["message"].startswith(field)
    assert not Entry.objects.filter(memory=memory_a).exists()


def _fail(cast, memory, task_id="weather", output=None):
    services.memory_update(memory=memory, policy=memory.policy)
    decorate(cast.a, memory.id, [{"role": "user", "content": "weather in Lyon?"}])
    failure = {"task_id": task_id, "error": RAW}
    if output is not None:
        failure["output"] = output
    response = report(cast.a, memory.id, [], failures=[failure])
    assert response.status_code == 202, response.content
    return response.json()


DIGEST = "Task 'weather' failed: Connection refused to [url] with api_key=[redacted]"


def test_with_the_policy_off_a_failure_leaves_a_committed_error_and_no_digest_or_action(cast, memory_a):
    services.memory_update(memory=memory_a, policy=policy("off"))
    answer = _fail(cast, memory_a, output={"status": 503})
    assert rows(memory_a) == [("message", True), ("data", True), ("error", True)]
    error = Entry.objects.get(memory=memory_a, kind="error")
    assert "java.net.ConnectException" in error.content and "https://pay.example.com/v1" in error.content
    assert "abc123secret" not in error.content
    assert not ErrorDigest.objects.exists()
    assert answer["task_errors"] == [
        {"type": "errorDigest", "taskId": "weather", "taskType": "reported", "text": DIGEST}
    ]


def test_in_digest_mode_the_output_and_error_are_uncommitted_and_a_digest_and_action_are_added(
    cast, memory_a
):
    services.memory_update(memory=memory_a, policy=policy("digest"))
    answer = _fail(cast, memory_a, output={"status": 503})
    assert rows(memory_a) == [
        ("message", True),
        ("data", False),
        ("error", False),
        ("digest", True),
        ("action", True),
    ]
    assert Entry.objects.get(memory=memory_a, kind="digest").content == DIGEST
    assert Entry.objects.get(memory=memory_a, kind="action").content == "task_failed_weather"
    digest = ErrorDigest.objects.get()
    assert (digest.task_id, digest.turn, digest.text, digest.memory_id) == ("weather", 1, DIGEST, memory_a.id)
    assert "abc123secret" not in digest.raw_error
    assert answer["task_errors"] == [
        {"type": "errorDigest", "taskId": "weather", "taskType": "reported", "text": DIGEST}
    ]
    assert cast.a.get(f"/v1/memories/{memory_a.id}").json()["counts"]["digests"] == 1


def test_with_exclude_all_the_failure_is_uncommitted_with_an_action_but_no_digest_or_task_error(
    cast, memory_a
):
    services.memory_update(memory=memory_a, policy=policy("exclude_all"))
    answer = _fail(cast, memory_a, output={"status": 503})
    assert rows(memory_a) == [("message", True), ("data", False), ("error", False), ("action", True)]
    assert not ErrorDigest.objects.exists()
    assert answer["task_errors"] == []


def test_with_keep_all_the_failure_stays_committed_with_an_action_and_no_digest(cast, memory_a):
    services.memory_update(memory=memory_a, policy=policy("keep_all"))
    answer = _fail(cast, memory_a, output={"status": 503})
    assert rows(memory_a) == [("message", True), ("data", True), ("error", True), ("action", True)]
    assert not ErrorDigest.objects.exists()
    assert [e["text"] for e in answer["task_errors"]] == [DIGEST]


def test_a_scheme_prefixed_task_id_keeps_its_scheme_only_in_the_digest_text(cast, memory_a):
    services.memory_update(memory=memory_a, policy=policy("digest"))
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}])
    error = '{"error": {"message": "model \'x\' not found", "type": "invalid_request_error"}}'
    answer = report(
        cast.a,
        memory_a.id,
        [],
        failures=[{"task_id": "eddi://ai.labs.llm", "error": "Chat model execution failed: " + error}],
    ).json()
    text = "Task 'eddi://ai.labs.llm' failed: Chat model execution failed: model 'x' not found"
    assert answer["task_errors"] == [
        {"type": "errorDigest", "taskId": "ai.labs.llm", "taskType": "reported", "text": text}
    ]
    assert Entry.objects.get(memory=memory_a, kind="action").content == "task_failed_ai.labs.llm"
    assert ErrorDigest.objects.get().task_id == "ai.labs.llm"
    entries = cast.a.get(f"/v1/memories/{memory_a.id}/entries?include_uncommitted=true").json()["data"]
    assert {e["task_id"] for e in entries if e["kind"] != "message"} == {"ai.labs.llm"}


def test_failures_and_messages_of_one_report_join_the_same_turn(cast, memory_a):
    services.memory_update(memory=memory_a, policy=policy("digest"))
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "one"}])
    report(cast.a, memory_a.id, [{"role": "assistant", "content": "r1"}])
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "two"}])
    answer = report(
        cast.a,
        memory_a.id,
        [{"role": "assistant", "content": "r2"}],
        failures=[{"task_id": "a", "error": "x"}, {"task_id": "b", "error": "y"}],
    ).json()
    assert answer["turn"] == 2
    assert set(Entry.objects.filter(memory=memory_a, seq__gt=2).values_list("turn", flat=True)) == {2}
    assert [d.task_id for d in ErrorDigest.objects.order_by("id")] == ["a", "b"]


def test_a_report_to_a_fresh_memory_opens_turn_one(cast, memory_a):
    assert report(cast.a, memory_a.id, [{"role": "assistant", "content": "Welcome!"}]).json()["turn"] == 1


def test_an_idempotency_key_is_remembered_for_24_hours_only(cast, memory_a):
    from datetime import timedelta

    from django.utils import timezone

    from memories.models import IdempotencyRecord

    body = {"messages": [{"role": "assistant", "content": "hello"}]}
    post(cast.a, f"/v1/memories/{memory_a.id}/report", body, **{"Idempotency-Key": "day-old"})
    IdempotencyRecord.objects.update(created_at=timezone.now() - timedelta(hours=25))
    again = post(cast.a, f"/v1/memories/{memory_a.id}/report", body, **{"Idempotency-Key": "day-old"})
    assert again.status_code == 202
    assert Entry.objects.filter(memory=memory_a, role="assistant").count() == 2
    assert IdempotencyRecord.objects.count() == 1
