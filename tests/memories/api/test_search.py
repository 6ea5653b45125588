"""POST /v1/memories/{id}/search with its filters (SPEC 4.2): role, a span of message times, a score
floor, and facts ranked with messages (each hit typed). Threads are in test_threads.py, the access
matrix in test_access.py."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.fixtures.api import error_of, post
from tests.fixtures.background import drain

SAID = [
    {"role": "user", "content": "My kayak is red", "created_at": "2024-01-10T09:00:00+00:00"},
    {"role": "assistant", "content": "A red kayak, noted", "created_at": "2024-01-10T09:00:05+00:00"},
    {"role": "user", "content": "I painted the kayak blue", "created_at": "2024-03-02T18:00:00+01:00"},
    {"role": "assistant", "content": "A blue kayak now", "created_at": "2024-03-02T17:00:05+00:00"},
]


@pytest.fixture
def said(cast, memory_a):
    assert post(cast.a, f"/v1/memories/{memory_a.id}/messages", {"messages": SAID}).status_code == 202
    drain()
    return memory_a


def search(cast, memory, **body):
    answer = post(cast.a, f"/v1/memories/{memory.id}/search", {"query": "kayak", **body})
    assert answer.status_code == 200, answer.content
    return answer.json()["data"]


def test_role_and_times_narrow_the_hits_in_the_index_read(cast, said):
    assert {h["type"] for h in search(cast, said)} == {"message"}
    assert {h["role"] for h in search(cast, said, role="user")} == {"user"}
    with CaptureQueriesContext(connection) as queries:
        hits = search(cast, said, role="assistant", after="2024-03-02T17:00:00Z")
    assert [h["snippet"] for h in hits] == ["A blue kayak now"]
    index_reads = [q["sql"] for q in queries.captured_queries if "memories_recall" in q["sql"]]
    assert index_reads and all("role = " in sql and "created_at >= " in sql for sql in index_reads)
    # `after` is inclusive, `before` exclusive; offsets count (18:00+01:00 is 17:00 UTC).
    span = search(cast, said, after="2024-03-02T17:00:00+00:00", before="2024-03-02T17:00:05Z")
    assert [h["snippet"] for h in span] == ["I painted the kayak blue"]
    assert search(cast, said, before="2024-01-10T09:00:00Z") == []


def test_min_score_drops_the_weaker_hits(cast, said):
    hits = search(cast, said)
    scores = sorted(h["score"] for h in hits)
    assert len(set(scores)) > 1
    floor = scores[-1]
    assert {h["score"] for h in search(cast, said, min_score=floor)} == {floor}
    assert search(cast, said, min_score=floor + 1) == []


def test_facts_rank_with_messages_when_included(cast, said):
    url = f"/v1/memories/{said.id}/facts"
    fact = post(cast.a, url, {"text": "Their kayak is blue"}).json()
    post(cast.a, url, {"text": "Likes tea"})
    assert all(h["type"] == "message" for h in search(cast, said))  # messages by default
    both = search(cast, said, query="blue kayak", include=["messages", "facts"])
    assert {h["type"] for h in both} == {"message", "fact"}
    assert [h["score"] for h in both] == sorted((h["score"] for h in both), reverse=True)
    (hit,) = [h for h in both if h["type"] == "fact"]
    assert hit == {"type": "fact", **fact, "score": hit["score"]} and hit["score"] > 0
    assert [h["text"] for h in search(cast, said, include=["facts"])] == ["Their kayak is blue"]
    # A fact a person wrote counts from when it was written.
    assert search(cast, said, include=["facts"], before="2024-06-01T00:00:00Z") == []
    assert len(search(cast, said, query="blue kayak", include=["messages", "facts"], limit=2)) == 2


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("role", "system"),
        ("role", 5),
        ("after", "yesterday"),
        ("after", "2024-01-01T00:00:00"),  # no offset
        ("after", "2024-02-30T00:00:00Z"),
        ("before", 1704067200),
        ("min_score", "high"),
        ("min_score", True),
        ("include", []),
        ("include", ["files"]),
        ("include", "facts"),
    ],
)
def test_a_bad_filter_is_400_naming_the_field(cast, memory_a, field, value):
    answer = post(cast.a, f"/v1/memories/{memory_a.id}/search", {"query": "kayak", field: value})
    assert error_of(answer, 400, "invalid_request")["message"].startswith(field), answer.content


def test_before_must_be_later_than_after(cast, memory_a):
    body = {"query": "kayak", "after": "2024-03-01T00:00:00Z", "before": "2024-02-01T00:00:00Z"}
    answer = post(cast.a, f"/v1/memories/{memory_a.id}/search", body)
    assert error_of(answer, 400, "invalid_request")["message"].startswith("before")
