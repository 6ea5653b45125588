"""docs/api.md names every route of the HTTP API, and no route that does not exist.

The routes are the OpenAPI schema's operations (what /v1/openapi.json serves) plus the /v1 routes
of the URL conf the schema leaves out (the provider-protocol routes under /v1/openai/ and
/v1/anthropic/): their methods are the handlers their view classes define. The page names a route
as a code span `METHOD /v1/path`, its path parameters in braces (`{id}`, `{memory_id}`: the names
need not match) and an optional query string.
"""

from __future__ import annotations

import re
from pathlib import Path

from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.generators import SchemaGenerator

API_MD = Path(__file__).resolve().parents[2] / "docs" / "api.md"
METHODS = ("get", "post", "put", "patch", "delete")
MENTION = re.compile(r"`(GET|POST|PUT|PATCH|DELETE) (/v1/[^`?\s]*)[^`]*`")
PARAMETER = re.compile(r"\{[^}/]*\}|<[^>/]*>")
# Plain async function views (no view class to read methods from): the providers' POST endpoints.
FUNCTION_VIEW_METHODS = {
    "/v1/openai/chat/completions": {"POST"},
    "/v1/openai/responses": {"POST"},
    "/v1/anthropic/v1/messages": {"POST"},
}


def _normal(path: str) -> str:
    return PARAMETER.sub("{}", path.rstrip("/"))


def _url_conf(patterns=None, prefix: str = "/"):
    for pattern in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(pattern, URLResolver):
            yield from _url_conf(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern.callback


def api_routes() -> set[tuple[str, str]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    routes = {
        (method.upper(), _normal(path))
        for path, operations in schema["paths"].items()
        for method in operations
        if method in METHODS
    }
    in_schema = {path for _, path in routes}
    for path, view in _url_conf():
        path = _normal(path)
        if not path.startswith("/v1/") or path in in_schema:
            continue
        view_class = getattr(view, "view_class", None)
        if view_class is None:
            assert path in FUNCTION_VIEW_METHODS, f"{path}: a function view; add its methods to the test"
            routes |= {(method, path) for method in FUNCTION_VIEW_METHODS[path]}
        else:
            routes |= {(method.upper(), path) for method in METHODS if hasattr(view_class, method)}
    return routes


def documented_routes() -> set[tuple[str, str]]:
    return {(method, _normal(path)) for method, path in MENTION.findall(API_MD.read_text())}


def test_api_md_names_every_route_of_the_api():
    routes = api_routes()
    assert ("POST", "/v1/memories/{}/search") in routes and ("POST", "/v1/anthropic/v1/messages") in routes
    missing = sorted(routes - documented_routes(), key=lambda route: (route[1], route[0]))
    assert missing == []


def test_api_md_names_no_route_the_api_does_not_have():
    assert sorted(documented_routes() - api_routes()) == []
