"""Per-key rate limits and per-project plan allowances (SPEC 4.1, 4.6)."""

from __future__ import annotations

import time

from memories.models import Memory
from projects import services as project_services
from tests.fixtures.api import error_of


def in_one_window(attempt):
    """Run `attempt(key)` with a fresh key until it ran inside one rate-limit minute.

    The limit counts per wall-clock minute, so a run that straddles a minute boundary is
    repeated rather than asserted on (a fresh key starts a fresh count).
    """
    for _ in range(3):
        window = int(time.time() // 60)
        result = attempt()
        if int(time.time() // 60) == window:
            return result
    raise AssertionError("three attempts straddled a minute boundary")


def test_a_key_over_its_limit_gets_429_rate_limited_with_retry_after(cast, settings):
    settings.THREADLESS_RATE_LIMIT_PER_MINUTE = 3

    def attempt():
        _key, plaintext = project_services.key_create(project=cast.project_a)
        client = cast.api(plaintext)
        return [client.get("/v1/memories") for _ in range(4)]

    responses = in_one_window(attempt)
    assert [r.status_code for r in responses] == [200, 200, 200, 429]
    assert [r["X-RateLimit-Remaining"] for r in responses[:3]] == ["2", "1", "0"]
    for response in responses:
        assert response["X-RateLimit-Limit"] == "3"
        assert int(response["X-RateLimit-Reset"]) > time.time() - 1
    error = error_of(responses[3], 429, "rate_limited")
    assert error["retryable"] is True
    assert 1 <= int(responses[3]["Retry-After"]) <= 60
    assert "3 per minute" in error["message"]


def test_the_limit_is_per_key(cast, settings):
    settings.THREADLESS_RATE_LIMIT_PER_MINUTE = 1

    def attempt():
        first = cast.api(project_services.key_create(project=cast.project_a)[1])
        second = cast.api(project_services.key_create(project=cast.project_a)[1])
        return [
            first.get("/v1/memories").status_code,
            first.get("/v1/memories").status_code,
            second.get("/v1/memories").status_code,
        ]

    assert in_one_window(attempt) == [200, 429, 200]


def test_a_projects_own_limit_overrides_the_default(cast, settings):
    settings.THREADLESS_RATE_LIMIT_PER_MINUTE = 100
    cast.project_a.rate_limit_per_minute = 2
    cast.project_a.save()

    def attempt():
        client = cast.api(project_services.key_create(project=cast.project_a)[1])
        return [client.get("/v1/memories") for _ in range(3)]

    responses = in_one_window(attempt)
    assert [r.status_code for r in responses] == [200, 200, 429]
    assert responses[0]["X-RateLimit-Limit"] == "2"


def test_zero_turns_the_limit_off(cast, settings):
    settings.THREADLESS_RATE_LIMIT_PER_MINUTE = 0
    responses = [cast.a.get("/v1/memories") for _ in range(5)]
    assert {r.status_code for r in responses} == {200}
    assert "X-RateLimit-Limit" not in responses[0]
    settings.THREADLESS_RATE_LIMIT_PER_MINUTE = 1
    cast.project_a.rate_limit_per_minute = 0
    cast.project_a.save()
    assert {cast.a.get("/v1/memories").status_code for _ in range(3)} == {200}


def test_a_used_up_monthly_allowance_is_429_quota_exceeded_naming_it(cast):
    cast.project_a.allowance_requests_per_month = 2
    cast.project_a.save()
    responses = [cast.a.get("/v1/memories") for _ in range(3)]
    assert [r.status_code for r in responses[:2]] == [200, 200]
    error = error_of(responses[2], 429, "quota_exceeded")
    assert "2 API requests per month" in error["message"]
    assert error["retryable"] is True
    assert "Retry-After" in responses[2]
    assert cast.b.get("/v1/memories").status_code == 200


def test_a_used_up_memory_allowance_is_429_quota_exceeded_naming_it(cast):
    cast.project_a.allowance_memories = 1
    cast.project_a.save()
    assert cast.a.post("/v1/memories", {"external_id": "u1"}, format="json").status_code == 201
    # Getting the existing memory by its external id is not a new memory.
    assert cast.a.post("/v1/memories", {"external_id": "u1"}, format="json").status_code == 200
    error = error_of(cast.a.post("/v1/memories", {}, format="json"), 429, "quota_exceeded")
    assert "1 memories" in error["message"]
    assert Memory.objects.filter(project=cast.project_a).count() == 1
