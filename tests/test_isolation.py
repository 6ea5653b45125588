"""Isolation matrix: every /v1 memory route × project A's key × project B's ids is a 404 that
changes nothing; a publishable key on any of them is a 401. The table must cover every route in
memories.api.urls, so a new route fails here until it is added.
"""

from __future__ import annotations

import pytest
from django.urls import get_resolver

from memories import services
from memories.api import urls as memory_urls
from memories.models import Entry, Fact, Memory
from projects import services as project_services

# (route name, method, path template, body)
ROUTES = [
    ("api-memory", "get", "/v1/memories/{m}", None),
    ("api-memory", "patch", "/v1/memories/{m}", {"metadata": {"owner": "a"}}),
    ("api-memory", "delete", "/v1/memories/{m}", None),
    ("api-decorate", "post", "/v1/memories/{m}/decorate", {"messages": [{"role": "user", "content": "hi"}]}),
    ("api-report", "post", "/v1/memories/{m}/report", {"messages": [{"role": "assistant", "content": "ok"}]}),
    ("api-entries", "get", "/v1/memories/{m}/entries", None),
    ("api-facts", "get", "/v1/memories/{m}/facts", None),
    ("api-facts", "post", "/v1/memories/{m}/facts", {"text": "I live in Lisbon."}),
    ("api-fact", "patch", "/v1/memories/{m}/facts/{f}", {"text": "I live in Porto."}),
    ("api-fact", "delete", "/v1/memories/{m}/facts/{f}", None),
    ("api-search", "post", "/v1/memories/{m}/search", {"query": "Lisbon"}),
]
LIST_ROUTES = [
    ("api-memories", "get", "/v1/memories", None),
    ("api-memories", "post", "/v1/memories", {"metadata": {"owner": "a"}}),
    ("api-memories", "delete", "/v1/memories?metadata.owner=b", None),
    # By external id: the key's own project's memory with that id (get-or-create), never another's.
    ("api-decorate-external", "post", "/v1/memories/external/user-b/decorate",
     {"messages": [{"role": "user", "content": "hi"}]}),
    ("api-report-external", "post", "/v1/memories/external/user-b/report",
     {"messages": [{"role": "assistant", "content": "ok"}]}),
]


@pytest.fixture
def world(cast):
    """Project B's memory with history and a fact; project A's own memory and fact."""
    b_memory, _ = services.memory_create(project=cast.project_b, metadata={"owner": "b"}, external_id="user-b")
    services.memory_decorate(memory=b_memory, messages=[{"role": "user", "content": "My name is Bea."}])
    services.report_accept(memory=Memory.objects.get(pk=b_memory.pk),
                           messages=[{"role": "assistant", "content": "Hello Bea."}], failures=[])
    b_fact, _ = services.fact_create(memory=b_memory, text="The user is called Bea.")
    a_memory, _ = services.memory_create(project=cast.project_a, metadata={"owner": "a"})
    a_fact, _ = services.fact_create(memory=a_memory, text="The user likes tea.")
    return {"b_memory": b_memory, "b_fact": b_fact, "a_memory": a_memory, "a_fact": a_fact}


def _snapshot(memory_id: str) -> tuple:
    memory = Memory.objects.get(pk=memory_id)
    return (memory.metadata, memory.instructions, memory.last_seq, memory.message_count,
            Entry.objects.filter(memory_id=memory_id).count(),
            sorted(Fact.objects.filter(memory_id=memory_id).values_list("id", "text", "active")))


def _call(client, method: str, path: str, body):
    kwargs = {"format": "json"} if body is not None else {}
    return getattr(client, method)(path, body, **kwargs) if body is not None else getattr(client, method)(path)


def test_the_matrix_covers_every_memory_route():
    names = {p.name for p in memory_urls.urlpatterns}
    covered = {r[0] for r in ROUTES + LIST_ROUTES}
    assert names <= covered, f"routes missing from the isolation matrix: {sorted(names - covered)}"


@pytest.mark.parametrize(("name", "method", "template", "body"), ROUTES, ids=[f"{r[1]} {r[2]}" for r in ROUTES])
def test_another_projects_ids_are_404_and_change_nothing(cast, world, name, method, template, body):
    b_memory, b_fact = world["b_memory"], world["b_fact"]
    before = _snapshot(b_memory.id)
    response = _call(cast.a, method, template.format(m=b_memory.id, f=b_fact.id), body)
    assert response.status_code == 404, response.content
    assert response.json()["error"]["code"] == "not_found"
    assert "Bea" not in response.content.decode()
    assert _snapshot(b_memory.id) == before


@pytest.mark.parametrize("method,template,body", [r[1:] for r in ROUTES if "{f}" in r[2]])
def test_own_memory_with_another_projects_fact_is_404(cast, world, method, template, body):
    response = _call(cast.a, method, template.format(m=world["a_memory"].id, f=world["b_fact"].id), body)
    assert response.status_code == 404
    assert Fact.objects.filter(pk=world["b_fact"].id, text="The user is called Bea.", active=True).exists()


def test_list_routes_never_reach_another_project(cast, world):
    b_memory = world["b_memory"]
    before = _snapshot(b_memory.id)
    listed = cast.a.get("/v1/memories?limit=100").json()["data"]
    assert b_memory.id not in {m["id"] for m in listed}
    assert cast.a.get("/v1/memories?external_id=user-b").json()["data"] == []
    assert cast.a.get("/v1/memories?metadata.owner=b").json()["data"] == []
    receipt = cast.a.delete("/v1/memories?metadata.owner=b").json()
    assert receipt["deleted"]["memories"] == 0
    created = cast.a.post("/v1/memories", {"external_id": "user-b"}, format="json")
    assert created.status_code == 201 and created.json()["id"] != b_memory.id
    assert _snapshot(b_memory.id) == before


def test_another_projects_external_id_reaches_only_a_memory_of_ones_own(cast, world):
    b_memory = world["b_memory"]
    before = _snapshot(b_memory.id)
    answer = cast.a.post("/v1/memories/external/user-b/decorate",
                         {"messages": [{"role": "user", "content": "What is my name?"}]}, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["memory_id"] != b_memory.id
    assert "Bea" not in answer.content.decode()
    reported = cast.a.post("/v1/memories/external/user-b/report",
                           {"messages": [{"role": "assistant", "content": "I don't know."}]}, format="json")
    assert reported.status_code == 202
    assert Memory.objects.get(pk=answer.json()["memory_id"]).project_id == cast.project_a.pk
    assert _snapshot(b_memory.id) == before


@pytest.mark.parametrize(("name", "method", "template", "body"), ROUTES + LIST_ROUTES,
                         ids=[f"{r[1]} {r[2]}" for r in ROUTES + LIST_ROUTES])
def test_a_publishable_key_is_refused_on_every_memory_route(cast, world, name, method, template, body):
    _, publishable = project_services.key_create(project=cast.project_a, kind="publishable", agent_id="agent_demo")
    before = _snapshot(world["a_memory"].id)
    response = _call(cast.api(publishable), method, template.format(m=world["a_memory"].id, f=world["a_fact"].id),
                     body)
    assert response.status_code == 401, response.content
    assert response.json()["error"]["code"] == "unauthorized"
    assert _snapshot(world["a_memory"].id) == before


@pytest.mark.parametrize("header", ["", "Bearer", "Bearer tl_proj_short", "Basic abc", "Bearer tl_proj_" + "x" * 42])
def test_missing_or_bad_keys_are_401_on_every_memory_route(cast, world, header):
    client = cast.api()
    if header:
        client.credentials(HTTP_AUTHORIZATION=header)
    for _name, method, template, body in ROUTES + LIST_ROUTES:
        response = _call(client, method, template.format(m=world["a_memory"].id, f=world["a_fact"].id), body)
        assert response.status_code == 401, (method, template, response.content)


def test_a_revoked_key_is_401(cast, world):
    key, plaintext = project_services.key_create(project=cast.project_a, kind="project")
    client = cast.api(plaintext)
    assert client.get(f"/v1/memories/{world['a_memory'].id}").status_code == 200
    project_services.key_revoke(prefix=key.prefix)
    assert client.get(f"/v1/memories/{world['a_memory'].id}").status_code == 401


def test_every_v1_memory_path_is_in_the_resolver():
    # The matrix's paths resolve to the named routes (a renamed path would make the 404s vacuous).
    resolver = get_resolver()
    for name, _method, template, _body in ROUTES:
        match = resolver.resolve(template.format(m="mem_x", f="fact_x").split("?")[0])
        assert match.url_name == name
