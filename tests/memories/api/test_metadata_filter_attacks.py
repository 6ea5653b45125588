"""`?metadata.<key>=` keys are literal JSON keys, never ORM lookups (SPEC 4.2)."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories import services
from memories.models import Memory
from tests.fixtures.api import error_of

EVIL = "^(a+)+$"


def _url(params: dict) -> str:
    return "/v1/memories?" + urlencode(params)


def test_a_regex_lookup_smuggled_into_a_metadata_key_is_a_400_that_reaches_no_query(cast):
    services.memory_create(project=cast.project_a, metadata={"x": "a" * 30 + "!"})
    with CaptureQueriesContext(connection) as queries:
        error = error_of(cast.a.get(_url({"metadata.x__regex": EVIL})), 400, "invalid_request")
    assert error["message"].startswith("metadata.x__regex: ")
    assert not [q for q in queries.captured_queries if "REGEXP" in q["sql"].upper()]
    assert not [q for q in queries.captured_queries if Memory._meta.db_table in q["sql"]]


def test_delete_by_filter_refuses_a_lookup_in_the_key_and_deletes_nothing(cast):
    kept, _ = services.memory_create(project=cast.project_a, metadata={"x": "aaaa"})
    error = error_of(cast.a.delete(_url({"metadata.x__regex": EVIL})), 400, "invalid_request")
    assert error["message"].startswith("metadata.x__regex: ")
    assert error_of(cast.a.delete(_url({"metadata.x__isnull": "false"})), 400, "invalid_request")
    assert Memory.objects.filter(pk=kept.pk).exists()


@pytest.mark.parametrize(
    "key", ["x__regex", "a__b", "__", "x y", "x;drop", "ü", "x$", "", "k" * 101, "x[0]", "x'", 'x"', "x\\"]
)
def test_a_metadata_key_outside_the_literal_alphabet_is_400_naming_the_parameter(cast, key):
    for method in (cast.a.get, cast.a.delete):
        error = error_of(method(_url({f"metadata.{key}": "v"})), 400, "invalid_request")
        assert error["message"].startswith("metadata." + key[:40])


def test_a_lookup_name_alone_is_just_a_literal_key(cast):
    # `metadata__regex` would be the regex lookup on the whole JSON column; here it is the key "regex".
    literal, _ = services.memory_create(project=cast.project_a, metadata={"regex": EVIL})
    services.memory_create(project=cast.project_a, metadata={"other": "a" * 30 + "!"})
    found = cast.a.get(_url({"metadata.regex": EVIL})).json()["data"]
    assert [m["id"] for m in found] == [literal.id]
    for lookup in ("contains", "isnull", "gt", "icontains", "has_key"):
        response = cast.a.get(_url({f"metadata.{lookup}": "a"}))
        assert response.status_code == 200 and response.json()["data"] == []


def test_dots_and_dashes_name_one_literal_key_not_a_path(cast):
    dotted, _ = services.memory_create(project=cast.project_a, metadata={"a.b": "1", "user-id": "7"})
    services.memory_create(project=cast.project_a, metadata={"a": {"b": "1"}})
    assert [m["id"] for m in cast.a.get(_url({"metadata.a.b": "1"})).json()["data"]] == [dotted.id]
    assert [
        m["id"] for m in cast.a.get(_url({"metadata.user-id": "7", "metadata.a.b": "1"})).json()["data"]
    ] == [dotted.id]
    receipt = cast.a.delete(_url({"metadata.a.b": "1"})).json()["deleted"]
    assert receipt["memories"] == 1 and not Memory.objects.filter(pk=dotted.pk).exists()
