"""The OpenAPI schema at /v1/openapi.json and the docs at /v1/docs match the real API."""

from __future__ import annotations

import json

import pytest

from tests.memories.api.test_access import ROUTES

SCHEMA_PATHS = {
    "/v1/memories": {"get", "post", "delete"},
    "/v1/memories/{memory_id}": {"get", "patch", "delete"},
    "/v1/memories/{memory_id}/decorate": {"post"},
    "/v1/memories/{memory_id}/report": {"post"},
    "/v1/memories/{memory_id}/entries": {"get"},
    "/v1/memories/{memory_id}/facts": {"get", "post"},
    "/v1/memories/{memory_id}/facts/{fact_id}": {"patch", "delete"},
    "/v1/memories/{memory_id}/search": {"post"},
    "/v1/memories/external/{external_id}/decorate": {"post"},
    "/v1/memories/external/{external_id}/report": {"post"},
    "/v1/memories/{memory_id}/threads": {"get"},
    "/v1/memories/{memory_id}/threads/{thread}": {"get", "delete"},
    "/v1/memories/{memory_id}/messages": {"post"},
    "/v1/memories/external/{external_id}/threads": {"get"},
    "/v1/memories/external/{external_id}/threads/{thread}": {"get", "delete"},
    "/v1/memories/external/{external_id}/messages": {"post"},
}


@pytest.fixture
def schema(cast):
    response = cast.api().get("/v1/openapi.json")
    assert response.status_code == 200
    assert "json" in response["Content-Type"]
    return json.loads(response.content)


def _schema_path(route_path: str) -> str:
    return (
        route_path.split("?")[0]
        .replace("{m}", "{memory_id}")
        .replace("{f}", "{fact_id}")
        .replace("/external/user-b/", "/external/{external_id}/")
        .replace("/external/user-a/", "/external/{external_id}/")
        .replace("/threads/t1", "/threads/{thread}")
    )


def test_the_schema_is_openapi_3_json_listing_every_memory_path_and_method(schema):
    assert schema["openapi"].startswith("3.")
    for path, methods in SCHEMA_PATHS.items():
        assert path in schema["paths"], path
        assert methods <= set(schema["paths"][path]), path


@pytest.mark.parametrize("route", ROUTES, ids=[r.name for r in ROUTES])
def test_each_operation_documents_its_real_success_status_and_its_errors(schema, route):
    operation = schema["paths"][_schema_path(route.path)][route.method]
    documented = set(operation["responses"])
    assert str(route.status) in documented
    assert {"401", "429"} <= documented
    if route.scoped:
        assert "404" in documented
    if route.bad is not None:
        assert "400" in documented
    error = operation["responses"]["401"]["content"]["application/json"]["schema"]
    assert error["$ref"].endswith("/Error")


def test_the_error_schema_is_the_one_error_shape(schema):
    error = schema["components"]["schemas"]["Error"]
    inner_ref = error["properties"]["error"]
    inner = (
        schema["components"]["schemas"][inner_ref["$ref"].rsplit("/", 1)[1]]
        if "$ref" in inner_ref
        else inner_ref
    )
    assert set(inner["properties"]) == {"code", "message", "hint", "request_id", "retryable"}


def test_the_schema_says_how_to_authenticate(schema):
    schemes = schema["components"]["securitySchemes"]
    assert any(s.get("scheme") == "bearer" for s in schemes.values())


def test_decorate_documents_its_request_fields_and_the_idempotency_header(schema):
    operation = schema["paths"]["/v1/memories/{memory_id}/decorate"]["post"]
    ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert set(schema["components"]["schemas"][ref]["properties"]) == {
        "instructions",
        "messages",
        "budget_tokens",
        "recall",
        "store",
        "memory_files",
    }
    assert any(p["name"] == "Idempotency-Key" and p["in"] == "header" for p in operation["parameters"])


def test_each_hot_route_url_gets_its_own_operation_from_the_one_extension(schema):
    from memories.api.hotroutes import OPERATIONS

    for (name, external), described in OPERATIONS.items():
        where = "external/{external_id}" if external else "{memory_id}"
        operation = schema["paths"][f"/v1/memories/{where}/{name}"]["post"]
        assert operation["operationId"] == described["operation_id"]
        assert operation["description"] == described["description"]
        assert any(p["name"] == "Idempotency-Key" for p in operation["parameters"])


def test_the_docs_page_renders_without_a_cdn(cast):
    response = cast.api().get("/v1/docs")
    assert response.status_code == 200
    html = response.content.decode()
    assert "redoc" in html.lower()
    assert "/v1/openapi.json" in html
    assert "cdn.jsdelivr" not in html and "unpkg.com" not in html


def test_search_documents_its_filters_and_typed_hits(schema):
    operation = schema["paths"]["/v1/memories/{memory_id}/search"]["post"]
    ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    fields = schema["components"]["schemas"][ref]["properties"]
    assert set(fields) == {"query", "limit", "thread", "role", "after", "before", "min_score", "include"}
    assert fields["after"]["format"] == "date-time"
    hit = schema["components"]["schemas"]["SearchHit"]["properties"]
    assert {"type", "snippet", "text", "score"} <= set(hit)
