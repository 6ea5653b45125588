"""decorate and report write at most 2 rows beyond the rows they store (issue 17).

What they store: the turn and entry rows and the report's outbox row. Everything else a request
writes (the memory row's counters, any bookkeeping) counts against the budget, and none of it
may be a row the whole project shares (rate counter, volume, plan usage).
"""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memories.models import Memory
from projects.models import ApiCall, Project, ProjectUsage, RateCounter

BUDGET = 2
WRITE = re.compile(r"\s*(?:INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)
STORED = re.compile(r'\s*INSERT\s+INTO\s+"?(?:memories_entry|memories_turn|memories_outbox)"?\s', re.IGNORECASE)
SHARED = ("memories_apicall", "memories_projectusage", "memories_ratecounter")


def bookkeeping(queries) -> list[str]:
    return [q["sql"] for q in queries if WRITE.match(q["sql"]) and not STORED.match(q["sql"])]


@pytest.fixture
def warm(cast):
    """A memory with history, on a project with a rate limit and a plan allowance, and a key
    whose last_used_at is fresh (it is written at most once a minute)."""
    cast.project_a.rate_limit_per_minute = 10_000
    cast.project_a.allowance_requests_per_month = 10_000
    cast.project_a.save()
    memory_id = cast.a.post("/v1/memories", {}, format="json").json()["id"]
    for i in range(3):
        assert cast.a.post(f"/v1/memories/{memory_id}/decorate",
                           {"messages": [{"role": "user", "content": f"hi {i}"}]}, format="json").status_code == 200
        assert cast.a.post(f"/v1/memories/{memory_id}/report",
                           {"messages": [{"role": "assistant", "content": f"yo {i}"}]}, format="json").status_code == 202
    return memory_id


def _decorate(cast, memory_id, **extra):
    return cast.a.post(f"/v1/memories/{memory_id}/decorate",
                       {"messages": [{"role": "user", "content": "hello there"}], **extra}, format="json")


def test_decorate_writes_at_most_two_rows_beyond_what_it_stores(cast, warm):
    with CaptureQueriesContext(connection) as ctx:
        assert _decorate(cast, warm, instructions="Be brief.").status_code == 200
    extra = bookkeeping(ctx.captured_queries)
    assert len(extra) <= BUDGET, extra
    assert any(STORED.match(q["sql"]) for q in ctx.captured_queries), "the new message was stored"


def test_report_writes_at_most_two_rows_beyond_what_it_stores(cast, warm):
    with CaptureQueriesContext(connection) as ctx:
        answer = cast.a.post(f"/v1/memories/{warm}/report",
                             {"messages": [{"role": "assistant", "content": "Hello!"}]}, format="json")
    assert answer.status_code == 202
    extra = bookkeeping(ctx.captured_queries)
    assert len(extra) <= BUDGET, extra


def test_a_report_with_a_failure_stays_within_the_budget_beyond_its_digest_rows(cast, warm):
    with CaptureQueriesContext(connection) as ctx:
        answer = cast.a.post(f"/v1/memories/{warm}/report", {
            "messages": [{"role": "assistant", "content": "Sorry."}],
            "failures": [{"task_id": "lookup", "error": "timeout after 30s"}]}, format="json")
    assert answer.status_code == 202
    extra = [sql for sql in bookkeeping(ctx.captured_queries) if "memories_errordigest" not in sql]
    assert len(extra) <= BUDGET + 1, extra  # + the digest counter on the memory row


def test_no_request_writes_a_row_the_whole_project_shares(cast, warm):
    with CaptureQueriesContext(connection) as ctx:
        assert _decorate(cast, warm).status_code == 200
        assert cast.a.post(f"/v1/memories/{warm}/report", {"messages": [{"role": "assistant", "content": "Hi"}]},
                           format="json").status_code == 202
        assert cast.a.get(f"/v1/memories/{warm}").status_code == 200
    shared = [q["sql"] for q in ctx.captured_queries if WRITE.match(q["sql"]) and any(t in q["sql"] for t in SHARED)]
    assert shared == []
    assert not RateCounter.objects.exists()


def test_a_dry_run_decorate_writes_nothing(cast, warm):
    with CaptureQueriesContext(connection) as ctx:
        assert _decorate(cast, warm, store=False).status_code == 200
    assert [q["sql"] for q in ctx.captured_queries if WRITE.match(q["sql"])] == []


def test_the_counts_reach_the_console_rows_with_the_flush(cast, warm):
    from projects.usage import usage_flush

    usage_flush()
    period_rows = ProjectUsage.objects.filter(project=cast.project_a)
    # 1 create + 6 warm-up requests so far, all counted against the plan.
    assert period_rows.get().requests == 7
    assert ApiCall.objects.get(project=cast.project_a, operation="decorate").count == 3
    assert _decorate(cast, warm).status_code == 200
    assert ApiCall.objects.get(project=cast.project_a, operation="decorate").count == 3  # not yet flushed
    assert usage_flush() >= 2
    assert ApiCall.objects.get(project=cast.project_a, operation="decorate").count == 4
    assert ApiCall.objects.get(project=cast.project_a, operation="report").count == 3
    assert period_rows.get().requests == 8
    assert usage_flush() == 0  # nothing new: a flush with nothing dirty writes nothing


def test_decorate_reads_no_project_row_and_the_memory_row_twice_at_most(cast, warm):
    # The key's project (cached with the key) scopes the memory; the locked re-read of the memory
    # keeps it, so the embeddings switch in context_build costs no query.
    with CaptureQueriesContext(connection) as ctx:
        assert _decorate(cast, warm).status_code == 200
    reads = [q["sql"] for q in ctx.captured_queries if q["sql"].lstrip().upper().startswith("SELECT")]

    def reading(table):
        return [sql for sql in reads if re.search(rf'\bFROM\s+"?{table}"?\s', sql)]

    assert reading(Project._meta.db_table) == [], reads
    assert len(reading(Memory._meta.db_table)) <= 2, reads
