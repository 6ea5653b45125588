"""The one access matrix of the /v1 memory routes (STYLE.md), every route of
`memories.api.urls` in one table: it works with a project key; 401 with no key, a revoked key, a
malformed key and a publishable key (changing nothing); 404 for project B's ids (changing
nothing, leaking nothing); 400 naming the field for a bad body or query; 400 for unknown fields
and for a body that is not a JSON object. A route added without a row here fails
`test_the_matrix_covers_every_memory_route`."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.urls import get_resolver

from memories import services
from memories.api import urls as memory_urls
from memories.models import Entry, Fact, Memory
from projects import services as project_services
from tests.fixtures.api import error_of


@dataclass(frozen=True)
class Route:
    name: str
    url_name: str  # the route's name in memories.api.urls
    method: str
    path: str  # {m}: memory id, {f}: fact id
    body: dict | None
    status: int
    bad: dict | str | None = None  # a bad body, or a bad query string appended to the path
    bad_field: str = ""
    scoped: bool = True  # the path names a memory
    answers: str = "application/json"  # the working answer's content type

    def url(self, m: str = "", f: str = "", query: str = "") -> str:
        path = self.path.format(m=m, f=f)
        if query:
            path += ("&" if "?" in path else "?") + query
        return path


USER_HI = [{"role": "user", "content": "hi"}]
ROUTES = [
    Route(
        "create memory",
        "api-memories",
        "post",
        "/v1/memories",
        {},
        201,
        {"metadata": "x"},
        "metadata",
        scoped=False,
    ),
    Route(
        "list memories", "api-memories", "get", "/v1/memories", None, 200, "limit=abc", "limit", scoped=False
    ),
    Route(
        "delete memories by filter",
        "api-memories",
        "delete",
        "/v1/memories?metadata.user=nobody",
        None,
        200,
        "cursor=x",
        "filter",
        scoped=False,
    ),
    Route("get memory", "api-memory", "get", "/v1/memories/{m}", None, 200),
    Route(
        "update memory",
        "api-memory",
        "patch",
        "/v1/memories/{m}",
        {"metadata": {"a": 1}},
        200,
        {"metadata": []},
        "metadata",
    ),
    Route("delete memory", "api-memory", "delete", "/v1/memories/{m}", None, 204),
    Route(
        "decorate",
        "api-decorate",
        "post",
        "/v1/memories/{m}/decorate",
        {"messages": USER_HI},
        200,
        {"messages": [{"role": "bot", "content": "x"}]},
        "messages[0].role",
    ),
    Route(
        "report",
        "api-report",
        "post",
        "/v1/memories/{m}/report",
        {"messages": [{"role": "assistant", "content": "ok"}]},
        202,
        {"messages": "hello"},
        "messages",
    ),
    Route(
        "decorate by external id",
        "api-decorate-external",
        "post",
        "/v1/memories/external/user-b/decorate",
        {"messages": USER_HI},
        200,
        {"messages": [{"role": "bot", "content": "x"}]},
        "messages[0].role",
        scoped=False,
    ),
    Route(
        "report by external id",
        "api-report-external",
        "post",
        "/v1/memories/external/user-b/report",
        {"messages": [{"role": "assistant", "content": "ok"}]},
        202,
        {"messages": "hello"},
        "messages",
        scoped=False,
    ),
    Route(
        "list entries",
        "api-entries",
        "get",
        "/v1/memories/{m}/entries",
        None,
        200,
        "include_uncommitted=maybe",
        "include_uncommitted",
    ),
    Route("list facts", "api-facts", "get", "/v1/memories/{m}/facts", None, 200, "limit=0", "limit"),
    Route(
        "create fact",
        "api-facts",
        "post",
        "/v1/memories/{m}/facts",
        {"text": "Likes green tea"},
        201,
        {"text": ""},
        "text",
    ),
    Route(
        "update fact",
        "api-fact",
        "patch",
        "/v1/memories/{m}/facts/{f}",
        {"text": "Likes coffee"},
        200,
        {"text": 5},
        "text",
    ),
    Route("delete fact", "api-fact", "delete", "/v1/memories/{m}/facts/{f}", None, 204),
    Route(
        "search",
        "api-search",
        "post",
        "/v1/memories/{m}/search",
        {"query": "tea"},
        200,
        {"query": ""},
        "query",
    ),
    Route("list files", "api-files", "get", "/v1/memories/{m}/files", None, 200),
    Route(
        "file command",
        "api-files-command",
        "post",
        "/v1/memories/{m}/files/command",
        {"command": "view", "path": "/memories"},
        200,
    ),
    Route(
        "list files by external id",
        "api-files-external",
        "get",
        "/v1/memories/external/user-b/files",
        None,
        200,
        scoped=False,
    ),
    Route(
        "file command by external id",
        "api-files-command-external",
        "post",
        "/v1/memories/external/user-b/files/command",
        {"command": "view", "path": "/memories"},
        200,
        scoped=False,
    ),
    Route(
        "export memory",
        "api-memory-export",
        "get",
        "/v1/memories/{m}/export",
        None,
        200,
        answers="application/x-ndjson",
    ),
    Route("list threads", "api-threads", "get", "/v1/memories/{m}/threads", None, 200, "limit=0", "limit"),
    Route("get thread", "api-thread", "get", "/v1/memories/{m}/threads/t1", None, 200),
    Route("delete thread", "api-thread", "delete", "/v1/memories/{m}/threads/t1", None, 200),
    Route(
        "import messages",
        "api-messages",
        "post",
        "/v1/memories/{m}/messages",
        {"thread": "t2", "messages": USER_HI},
        202,
        {"messages": [{"role": "user", "content": "x", "created_at": "yesterday"}]},
        "messages[0].created_at",
    ),
    Route(
        "list threads by external id",
        "api-threads-external",
        "get",
        "/v1/memories/external/user-a/threads",
        None,
        200,
        "limit=0",
        "limit",
        scoped=False,
    ),
    Route(
        "get thread by external id",
        "api-thread-external",
        "get",
        "/v1/memories/external/user-a/threads/t1",
        None,
        200,
        scoped=False,
    ),
    Route(
        "delete thread by external id",
        "api-thread-external",
        "delete",
        "/v1/memories/external/user-a/threads/t1",
        None,
        200,
        scoped=False,
    ),
    Route(
        "import messages by external id",
        "api-messages-external",
        "post",
        "/v1/memories/external/user-b/messages",
        {"messages": USER_HI},
        202,
        {"thread": "a\nb", "messages": USER_HI},
        "thread",
        scoped=False,
    ),
]
# Its body is an exported document, not a JSON object: tests/memories/api/test_transfer.py has its access
# cases.
NOT_JSON_BODY = {"api-memory-import"}
BODY_ROUTES = [r for r in ROUTES if r.body is not None]
SCOPED = [r for r in ROUTES if r.scoped]
FACT_ROUTES = [r for r in ROUTES if "{f}" in r.path]
IDS = [r.name for r in ROUTES]


@pytest.fixture
def world(cast):
    """Project A's memory with a fact and a thread `t1`, and its memory with external id `user-a`
    and a thread `t1`; project B's memory (external id `user-b`) with history and a fact."""
    memory_a, _ = services.memory_create(project=cast.project_a, metadata={"user": "42", "owner": "a"})
    fact_a, _ = services.fact_create(memory=memory_a, text="Has a beagle called Biscuit")
    services.memory_decorate(memory=memory_a, messages=[{"role": "user", "content": "hi"}], thread="t1")
    own, _ = services.memory_create(project=cast.project_a, external_id="user-a")
    services.memory_decorate(memory=own, messages=[{"role": "user", "content": "hi"}], thread="t1")
    memory_b, _ = services.memory_create(
        project=cast.project_b, metadata={"user": "42", "owner": "b"}, external_id="user-b"
    )
    services.memory_decorate(memory=memory_b, messages=[{"role": "user", "content": "My name is Bea."}])
    services.report_accept(
        memory=Memory.objects.get(pk=memory_b.pk),
        messages=[{"role": "assistant", "content": "Hello Bea."}],
        failures=[],
    )
    fact_b, _ = services.fact_create(memory=memory_b, text="The user is called Bea.")
    return {"m": memory_a.id, "f": fact_a.id, "mb": memory_b.id, "fb": fact_b.id}


def snapshot(memory_id: str) -> tuple:
    memory = Memory.objects.get(pk=memory_id)
    return (
        memory.metadata,
        memory.instructions,
        memory.last_seq,
        memory.message_count,
        Entry.objects.filter(memory_id=memory_id).count(),
        sorted(Fact.objects.filter(memory_id=memory_id).values_list("id", "text", "active")),
    )


def test_the_matrix_covers_every_memory_route():
    names = {p.name for p in memory_urls.urlpatterns} - NOT_JSON_BODY
    assert names <= {r.url_name for r in ROUTES}, (
        f"routes missing from the matrix: {sorted(names - {r.url_name for r in ROUTES})}"
    )


def test_every_path_of_the_matrix_resolves_to_its_named_route():
    # A renamed path would make the 404s below vacuous.
    resolver = get_resolver()
    for route in ROUTES:
        assert resolver.resolve(route.url("mem_x", "fact_x").split("?")[0]).url_name == route.url_name, (
            route.name
        )


def call(client, route: Route, path: str, body=None):
    if body is None:
        return getattr(client, route.method)(path)
    return getattr(client, route.method)(path, body, format="json")


@pytest.mark.parametrize("route", ROUTES, ids=IDS)
def test_the_route_works_with_a_project_key(cast, world, route):
    response = call(cast.a, route, route.url(world["m"], world["f"]), route.body)
    assert response.status_code == route.status, response.content
    assert response["X-Request-Id"].startswith("req_")
    if route.status != 204:
        assert response["Content-Type"].startswith(route.answers)


@pytest.mark.parametrize("route", ROUTES, ids=IDS)
def test_the_route_refuses_a_request_without_a_key(cast, world, route):
    error = error_of(
        call(cast.api(), route, route.url(world["m"], world["f"]), route.body), 401, "unauthorized"
    )
    assert error["retryable"] is False


@pytest.mark.parametrize("route", ROUTES, ids=IDS)
def test_the_route_refuses_a_revoked_key(cast, world, route):
    key, plaintext = project_services.key_create(project=cast.project_a, name="old")
    project_services.key_revoke(prefix=key.prefix)
    error = error_of(
        call(cast.api(plaintext), route, route.url(world["m"], world["f"]), route.body), 401, "unauthorized"
    )
    assert "revoked" in error["message"]


@pytest.mark.parametrize("route", ROUTES, ids=IDS)
@pytest.mark.parametrize(
    "header",
    [
        "Bearer tl_proj_short",
        "Bearer sk-not-ours-1234567890",
        "Basic abc",
        "Bearer " + "tl_proj_" + "A" * 42,
        "Bearer",
    ],
)
def test_the_route_refuses_a_malformed_or_unknown_key(cast, world, route, header):
    client = cast.api()
    client.credentials(HTTP_AUTHORIZATION=header)
    error = error_of(call(client, route, route.url(world["m"], world["f"]), route.body), 401, "unauthorized")
    assert "tl_proj_" + "A" * 42 not in error["message"]


@pytest.mark.parametrize("route", ROUTES, ids=IDS)
def test_the_route_refuses_a_publishable_key_and_changes_nothing(cast, world, route):
    before = snapshot(world["m"])
    error = error_of(
        call(cast.api(cast.publishable_a), route, route.url(world["m"], world["f"]), route.body),
        401,
        "unauthorized",
    )
    assert "publishable" in error["message"]
    assert snapshot(world["m"]) == before


@pytest.mark.parametrize("route", SCOPED, ids=[r.name for r in SCOPED])
def test_the_route_answers_404_for_project_bs_memory_and_changes_nothing(cast, world, route):
    before = snapshot(world["mb"])
    response = call(cast.a, route, route.url(world["mb"], world["fb"]), route.body)
    error = error_of(response, 404, "not_found")
    assert world["mb"] in error["message"] or "No" in error["message"]
    assert error["hint"]
    assert not any(said in response.content.decode() for said in ("name is Bea", "Hello Bea", "called Bea"))
    assert snapshot(world["mb"]) == before


@pytest.mark.parametrize("route", FACT_ROUTES, ids=[r.name for r in FACT_ROUTES])
def test_the_route_answers_404_for_project_bs_fact_under_our_memory(cast, world, route):
    error_of(call(cast.a, route, route.url(world["m"], world["fb"]), route.body), 404, "not_found")
    assert Fact.objects.filter(pk=world["fb"], text="The user is called Bea.", active=True).exists()


@pytest.mark.parametrize("route", SCOPED, ids=[r.name for r in SCOPED])
def test_the_route_answers_404_for_an_id_nobody_has(cast, world, route):
    error_of(call(cast.a, route, route.url("mem_doesnotexist", "fct_nope"), route.body), 404, "not_found")


@pytest.mark.parametrize(
    "route", [r for r in ROUTES if r.bad is not None], ids=[r.name for r in ROUTES if r.bad is not None]
)
def test_the_route_answers_400_naming_the_field_for_a_bad_body_or_query(cast, world, route):
    if isinstance(route.bad, str):
        path = route.url(world["m"], world["f"], route.bad)
        if route.name == "delete memories by filter":
            path = "/v1/memories"  # no filter at all
        response = call(cast.a, route, path, route.body)
    else:
        response = call(cast.a, route, route.url(world["m"], world["f"]), route.bad)
    error = error_of(response, 400, "invalid_request")
    assert error["message"].startswith(route.bad_field), error["message"]


@pytest.mark.parametrize("route", BODY_ROUTES, ids=[r.name for r in BODY_ROUTES])
def test_the_route_answers_400_for_an_unknown_field(cast, world, route):
    body = {**route.body, "colour": "blue"}
    error = error_of(call(cast.a, route, route.url(world["m"], world["f"]), body), 400, "invalid_request")
    assert error["message"].startswith("colour"), error["message"]


@pytest.mark.parametrize("route", BODY_ROUTES, ids=[r.name for r in BODY_ROUTES])
@pytest.mark.parametrize("raw", [b"[1, 2]", b'"text"', b"{not json", b"null"])
def test_the_route_answers_400_for_a_body_that_is_not_a_json_object(cast, world, route, raw):
    response = getattr(cast.a, route.method)(
        route.url(world["m"], world["f"]), raw, content_type="application/json"
    )
    error_of(response, 400, "invalid_request")


def test_a_key_records_when_it_was_last_used(cast):
    from projects.models import ApiKey

    key = ApiKey.objects.get(project=cast.project_a)
    assert key.last_used_at is None
    assert cast.a.get("/v1/memories").status_code == 200
    key.refresh_from_db()
    assert key.last_used_at is not None


def test_the_list_routes_never_reach_another_project(cast, world):
    before = snapshot(world["mb"])
    listed = cast.a.get("/v1/memories?limit=100").json()["data"]
    assert world["mb"] not in {m["id"] for m in listed}
    assert cast.a.get("/v1/memories?external_id=user-b").json()["data"] == []
    assert cast.a.get("/v1/memories?metadata.owner=b").json()["data"] == []
    assert cast.a.delete("/v1/memories?metadata.owner=b").json()["deleted"]["memories"] == 0
    created = cast.a.post("/v1/memories", {"external_id": "user-b"}, format="json")
    assert created.status_code == 201 and created.json()["id"] != world["mb"]
    assert snapshot(world["mb"]) == before


def test_another_projects_external_id_reaches_only_a_memory_of_ones_own(cast, world):
    before = snapshot(world["mb"])
    answer = cast.a.post(
        "/v1/memories/external/user-b/decorate",
        {"messages": [{"role": "user", "content": "What is my name?"}]},
        format="json",
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["memory_id"] != world["mb"]
    assert not any(said in answer.content.decode() for said in ("name is Bea", "Hello Bea", "called Bea"))
    reported = cast.a.post(
        "/v1/memories/external/user-b/report",
        {"messages": [{"role": "assistant", "content": "I don't know."}]},
        format="json",
    )
    assert reported.status_code == 202
    assert Memory.objects.get(pk=answer.json()["memory_id"]).project_id == cast.project_a.pk
    assert snapshot(world["mb"]) == before


def test_a_revoked_key_stops_working_at_once(cast, world):
    key, plaintext = project_services.key_create(project=cast.project_a, kind="project")
    client = cast.api(plaintext)
    assert client.get(f"/v1/memories/{world['m']}").status_code == 200
    project_services.key_revoke(prefix=key.prefix)
    assert client.get(f"/v1/memories/{world['m']}").status_code == 401
