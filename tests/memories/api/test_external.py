"""POST /v1/memories/external/{external_id}/decorate and …/report: get-or-create by the app's own id."""

from __future__ import annotations

from urllib.parse import quote

from memories import services
from memories.models import Entry, Memory
from tests.fixtures.api import error_of, post


def ext(external_id: str, op: str) -> str:
    return f"/v1/memories/external/{quote(external_id, safe='')}/{op}"


def test_the_first_decorate_by_external_id_creates_the_memory_and_stores_the_message(cast):
    answer = post(
        cast.a,
        ext("user-42", "decorate"),
        {"messages": [{"role": "user", "content": "Hi, I'm Ada."}], "instructions": "Be kind."},
    )
    assert answer.status_code == 200, answer.content
    memory = Memory.objects.get(project=cast.project_a, external_id="user-42")
    assert answer.json()["memory_id"] == memory.id
    assert answer.json()["turn"] == 1
    assert answer.json()["instructions"] == "Be kind."
    assert [(e.role, e.content) for e in Entry.objects.filter(memory=memory)] == [("user", "Hi, I'm Ada.")]


def test_decorate_and_report_by_external_id_reach_the_same_memory_as_create_did(cast):
    memory, _ = services.memory_create(project=cast.project_a, external_id="user-7", instructions="Be brief.")
    first = post(cast.a, ext("user-7", "decorate"), {"messages": [{"role": "user", "content": "one"}]})
    assert first.json()["memory_id"] == memory.id
    assert first.json()["instructions"] == "Be brief."  # the memory's own, so it is that memory
    reported = post(
        cast.a, ext("user-7", "report"), {"messages": [{"role": "assistant", "content": "reply"}]}
    )
    assert reported.status_code == 202
    second = post(
        cast.a, f"/v1/memories/{memory.id}/decorate", {"messages": [{"role": "user", "content": "two"}]}
    )
    assert [m["content"] for m in second.json()["messages"]] == ["one", "reply", "two"]
    assert Memory.objects.filter(project=cast.project_a, external_id="user-7").count() == 1


def test_a_report_by_a_new_external_id_creates_the_memory_too(cast):
    answer = post(cast.a, ext("fresh", "report"), {"messages": [{"role": "assistant", "content": "hello"}]})
    assert answer.status_code == 202, answer.content
    memory = Memory.objects.get(project=cast.project_a, external_id="fresh")
    assert [e.content for e in Entry.objects.filter(memory=memory)] == ["hello"]


def test_an_external_id_with_a_slash_and_unicode_round_trips_through_the_path(cast):
    answer = post(cast.a, ext("tenant/ü 42", "decorate"), {"messages": [{"role": "user", "content": "hi"}]})
    assert answer.status_code == 200, answer.content
    assert (
        Memory.objects.get(project=cast.project_a, external_id="tenant/ü 42").id == answer.json()["memory_id"]
    )


def test_each_project_has_its_own_memory_for_one_external_id(cast):
    a = post(
        cast.a, ext("user-1", "decorate"), {"messages": [{"role": "user", "content": "A's secret"}]}
    ).json()
    b = post(cast.b, ext("user-1", "decorate"), {"messages": [{"role": "user", "content": "hi"}]}).json()
    assert a["memory_id"] != b["memory_id"]
    assert [m["content"] for m in b["messages"]] == ["hi"]


def test_a_bad_body_is_a_400_and_creates_no_memory(cast):
    answer = post(cast.a, ext("user-9", "decorate"), {"messages": [{"role": "robot", "content": "hi"}]})
    assert "messages[0].role" in error_of(answer, 400, "invalid_request")["message"]
    answer = post(cast.a, ext("user-9", "report"), {"messages": [], "extra": 1})
    assert "extra" in error_of(answer, 400, "invalid_request")["message"]
    assert not Memory.objects.filter(external_id="user-9").exists()


def test_an_overlong_external_id_is_a_400_naming_it(cast):
    answer = post(cast.a, ext("x" * 201, "decorate"), {"messages": [{"role": "user", "content": "hi"}]})
    assert "external_id" in error_of(answer, 400, "invalid_request")["message"]


def test_the_idempotency_key_replays_a_decorate_by_external_id(cast):
    body = {"messages": [{"role": "user", "content": "once"}]}
    first = post(cast.a, ext("user-5", "decorate"), body, **{"Idempotency-Key": "k1"})
    again = post(cast.a, ext("user-5", "decorate"), body, **{"Idempotency-Key": "k1"})
    assert first.json() == again.json()
    memory = Memory.objects.get(external_id="user-5")
    assert Entry.objects.filter(memory=memory).count() == 1


def test_the_routes_need_a_project_key(cast):
    answer = cast.api().post(ext("user-1", "decorate"), {"messages": []}, format="json")
    error_of(answer, 401, "unauthorized")
