"""Memories, entries and facts: create/list/get/patch/delete (SPEC 4.2, 4.6, 4.7)."""

from __future__ import annotations

from memories import services
from memories.models import Entry, ErrorDigest, Fact, Memory, Outbox, Turn
from tests.fixtures.api import decorate, error_of, post, report

DEFAULT_POLICY = {
    "strictWriteDiscipline": {"enabled": False, "onFailure": "digest", "continueOnFailure": False}
}


def test_creating_a_memory_answers_201_with_the_documented_shape(cast):
    response = post(cast.a, "/v1/memories", {"metadata": {"user": "42"}, "instructions": "Be brief."})
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {
        "id",
        "external_id",
        "created_at",
        "updated_at",
        "metadata",
        "instructions",
        "policy",
        "counts",
        "processing",
    }
    assert body["id"].startswith("mem_")
    assert body["external_id"] is None
    assert body["metadata"] == {"user": "42"}
    assert body["instructions"] == "Be brief."
    assert body["policy"] == DEFAULT_POLICY
    assert body["counts"] == {"messages": 0, "facts": 0, "digests": 0, "tokens": 0}
    assert body["processing"] == "processed"


def test_an_external_id_makes_create_a_get_or_create_that_ignores_the_new_metadata_and_policy(cast):
    first = post(cast.a, "/v1/memories", {"external_id": "user-7", "metadata": {"plan": "free"}})
    again = post(
        cast.a,
        "/v1/memories",
        {
            "external_id": "user-7",
            "metadata": {"plan": "pro"},
            "policy": {"strictWriteDiscipline": {"enabled": True}},
        },
    )
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert again.json()["metadata"] == {"plan": "free"}
    assert again.json()["policy"] == DEFAULT_POLICY
    assert again.json()["external_id"] == "user-7"
    # Another project may use the same external id for its own memory.
    assert post(cast.b, "/v1/memories", {"external_id": "user-7"}).status_code == 201


def test_a_bad_policy_is_a_400_naming_its_json_path(cast):
    for policy, path in [
        (
            {"strictWriteDiscipline": {"enabled": True, "onFailure": "ignore"}},
            "policy.strictWriteDiscipline.onFailure",
        ),
        ({"strictWriteDiscipline": {"enabled": "yes"}}, "policy.strictWriteDiscipline.enabled"),
        ({"strict": {}}, "policy.strict"),
        ([], "policy"),
    ]:
        error = error_of(post(cast.a, "/v1/memories", {"policy": policy}), 400, "invalid_request")
        assert error["message"].startswith(path), error["message"]


def test_the_list_is_newest_first_and_cursor_paginated(cast):
    ids = [post(cast.a, "/v1/memories", {"metadata": {"n": i}}).json()["id"] for i in range(5)]
    post(cast.b, "/v1/memories", {})
    seen, cursor = [], None
    pages = 0
    while True:
        response = cast.a.get("/v1/memories?limit=2" + (f"&cursor={cursor}" if cursor else ""))
        body = response.json()
        assert set(body) == {"data", "next_cursor"}
        seen += [m["id"] for m in body["data"]]
        pages += 1
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert pages == 3
    assert seen == list(reversed(ids))


def test_the_list_filters_by_metadata_and_by_external_id(cast):
    a = post(cast.a, "/v1/memories", {"metadata": {"user": "42", "tier": "gold"}}).json()["id"]
    b = post(cast.a, "/v1/memories", {"metadata": {"user": "42"}, "external_id": "ext-b"}).json()["id"]
    post(cast.a, "/v1/memories", {"metadata": {"user": "43"}})
    assert {m["id"] for m in cast.a.get("/v1/memories?metadata.user=42").json()["data"]} == {a, b}
    assert [
        m["id"] for m in cast.a.get("/v1/memories?metadata.user=42&metadata.tier=gold").json()["data"]
    ] == [a]
    assert [m["id"] for m in cast.a.get("/v1/memories?external_id=ext-b").json()["data"]] == [b]
    assert cast.b.get("/v1/memories?metadata.user=42").json()["data"] == []


def test_a_cursor_this_api_did_not_return_is_a_400(cast):
    for cursor in ("!!!", "bm9wZQ", "YXx8Yg"):
        error = error_of(cast.a.get(f"/v1/memories?cursor={cursor}"), 400, "invalid_request")
        assert error["message"].startswith("cursor")


def test_get_counts_messages_facts_digests_and_tokens(cast, memory_a):
    services.memory_update(memory=memory_a, policy={"strictWriteDiscipline": {"enabled": True}})
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "hello there"}])
    report(
        cast.a,
        memory_a.id,
        [{"role": "assistant", "content": "hi!"}],
        failures=[{"task_id": "t", "error": "x"}],
    )
    services.fact_create(memory=memory_a, text="Likes tea")
    counts = cast.a.get(f"/v1/memories/{memory_a.id}").json()["counts"]
    assert counts == {
        "messages": 2,
        "facts": 1,
        "digests": 1,
        "tokens": sum(Entry.objects.filter(memory=memory_a, kind="message").values_list("tokens", flat=True)),
    }


def test_patch_changes_metadata_instructions_and_policy(cast, memory_a):
    policy = {"strictWriteDiscipline": {"enabled": True, "onFailure": "keep_all", "continueOnFailure": True}}
    response = cast.a.patch(
        f"/v1/memories/{memory_a.id}",
        {"metadata": {"user": "43"}, "instructions": "New.", "policy": policy},
        format="json",
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["metadata"], body["instructions"], body["policy"]) == ({"user": "43"}, "New.", policy)
    assert cast.a.patch(f"/v1/memories/{memory_a.id}", {"instructions": "Only this."}, format="json").json()[
        "metadata"
    ] == {"user": "43"}


def _populate(cast, memory):
    services.memory_update(memory=memory, policy={"strictWriteDiscipline": {"enabled": True}})
    decorate(cast.a, memory.id, [{"role": "user", "content": "I have a dog."}])
    report(
        cast.a,
        memory.id,
        [{"role": "assistant", "content": "Nice!"}],
        failures=[{"task_id": "t", "error": "x"}],
    )
    services.fact_create(memory=memory, text="Has a dog")


def test_deleting_a_memory_removes_everything_derived_from_it(cast, memory_a):
    _populate(cast, memory_a)
    other, _ = services.memory_create(project=cast.project_a)
    _populate(cast, other)
    response = cast.a.delete(f"/v1/memories/{memory_a.id}")
    assert response.status_code == 204
    assert response.content == b""
    for model in (Entry, Turn, Fact, ErrorDigest, Outbox):
        assert not model.objects.filter(memory_id=memory_a.id).exists(), model.__name__
        assert model.objects.filter(memory_id=other.id).exists(), model.__name__
    assert not Memory.objects.filter(pk=memory_a.pk).exists()
    error_of(cast.a.get(f"/v1/memories/{memory_a.id}"), 404, "not_found")


def test_delete_by_filter_answers_a_receipt_counting_every_kind_of_row(cast):
    doomed = [services.memory_create(project=cast.project_a, metadata={"user": "gone"})[0] for _ in range(2)]
    kept, _ = services.memory_create(project=cast.project_a, metadata={"user": "kept"})
    same_in_b, _ = services.memory_create(project=cast.project_b, metadata={"user": "gone"})
    for memory in doomed:
        _populate(cast, memory)
    response = cast.a.delete("/v1/memories?metadata.user=gone")
    assert response.status_code == 200
    assert response.json() == {
        "deleted": {
            "memories": 2,
            "entries": 2 * 5,
            "turns": 2,
            "facts": 2,
            "digests": 2,
            "summaries": 0,
            "outbox": 2,
            "fact_tombstones": 0,
            "files": 0,
            "file_versions": 0,
            "index_rows": 0,
        }
    }
    assert set(Memory.objects.values_list("id", flat=True)) == {kept.id, same_in_b.id}
    by_external = services.memory_create(project=cast.project_a, external_id="x-1")[0]
    assert cast.a.delete("/v1/memories?external_id=x-1").json()["deleted"]["memories"] == 1
    assert not Memory.objects.filter(pk=by_external.pk).exists()


def test_delete_by_filter_without_a_filter_is_a_400_and_deletes_nothing(cast, memory_a):
    error = error_of(cast.a.delete("/v1/memories"), 400, "invalid_request")
    assert "metadata.<key>" in error["message"]
    assert Memory.objects.filter(pk=memory_a.pk).exists()


def test_entries_hide_uncommitted_rows_unless_asked(cast, memory_a):
    services.memory_update(memory=memory_a, policy={"strictWriteDiscipline": {"enabled": True}})
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "hi"}])
    report(cast.a, memory_a.id, [], failures=[{"task_id": "t", "error": "raw failure", "output": {"a": 1}}])
    visible = cast.a.get(f"/v1/memories/{memory_a.id}/entries").json()["data"]
    assert [(e["kind"], e["committed"]) for e in visible] == [
        ("message", True),
        ("digest", True),
        ("action", True),
    ]
    everything = cast.a.get(f"/v1/memories/{memory_a.id}/entries?include_uncommitted=true").json()["data"]
    assert [(e["kind"], e["committed"]) for e in everything] == [
        ("message", True),
        ("data", False),
        ("error", False),
        ("digest", True),
        ("action", True),
    ]
    entry = everything[0]
    assert set(entry) >= {
        "id",
        "seq",
        "turn",
        "kind",
        "role",
        "content",
        "task_id",
        "committed",
        "tokens",
        "created_at",
    }
    assert everything[1]["content"] == {"a": 1}


def test_entries_are_cursor_paginated_in_sequence_order(cast, memory_a):
    for i in range(5):
        decorate(cast.a, memory_a.id, [{"role": "user", "content": f"m{i}"}])
    seen, cursor = [], None
    while True:
        body = cast.a.get(
            f"/v1/memories/{memory_a.id}/entries?limit=2" + (f"&cursor={cursor}" if cursor else "")
        ).json()
        seen += [e["content"] for e in body["data"]]
        cursor = body["next_cursor"]
        if not cursor:
            break
    assert seen == [f"m{i}" for i in range(5)]


def test_facts_can_be_created_listed_edited_and_deleted(cast, memory_a):
    created = post(cast.a, f"/v1/memories/{memory_a.id}/facts", {"text": "Has a beagle called Biscuit"})
    assert created.status_code == 201
    fact = created.json()
    assert set(fact) >= {"id", "text", "slot", "source_entry_ids", "created_at", "updated_at"}
    duplicate = post(cast.a, f"/v1/memories/{memory_a.id}/facts", {"text": "has a beagle called biscuit!"})
    assert duplicate.status_code == 200 and duplicate.json()["id"] == fact["id"]
    listed = cast.a.get(f"/v1/memories/{memory_a.id}/facts").json()
    assert [f["id"] for f in listed["data"]] == [fact["id"]] and listed["next_cursor"] is None
    edited = cast.a.patch(
        f"/v1/memories/{memory_a.id}/facts/{fact['id']}", {"text": "Has a beagle called Max"}, format="json"
    )
    assert edited.status_code == 200 and edited.json()["text"] == "Has a beagle called Max"
    assert cast.a.delete(f"/v1/memories/{memory_a.id}/facts/{fact['id']}").status_code == 204
    assert cast.a.get(f"/v1/memories/{memory_a.id}/facts").json()["data"] == []
    error_of(cast.a.delete(f"/v1/memories/{memory_a.id}/facts/{fact['id']}"), 404, "not_found")
