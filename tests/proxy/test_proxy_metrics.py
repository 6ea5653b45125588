"""The proxy's figures on /metrics (common.metrics): calls by provider and upstream status, the
latency the proxy adds before the upstream call, and the calls forwarded without memory because
decorate could not run. Labels carry the provider and a status, never the memory or the text."""

from __future__ import annotations

import orjson
import pytest
from django.db import OperationalError
from django.test import AsyncClient

from common import metrics
from harness.servers import free_port
from proxy import services as proxy_services
from tests.fixtures.metrics import figures

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not metrics.ON, reason="THREADLESS_METRICS is off"),
]

CHAT = "/v1/openai/chat/completions"
MESSAGES = "/v1/anthropic/v1/messages"


async def _call(cast, upstream, path: str = CHAT, **headers):
    body = {"model": "m", "max_tokens": 16, "messages": [{"role": "user", "content": "I live in Lisbon."}]}
    return await AsyncClient().post(
        path,
        orjson.dumps(body),
        content_type="application/json",
        headers={
            "Authorization": f"Bearer {cast.key_a}",
            "X-Upstream-Base-Url": upstream.openai_url if path == CHAT else upstream.anthropic_url,
            "X-Upstream-Authorization": "sk-stub",
            "X-Threadless-External-Id": "metrics-user-1",
            **headers,
        },
    )


async def test_proxy_calls_are_counted_by_provider_and_upstream_status(cast, upstream):
    before = figures()
    assert (await _call(cast, upstream)).status_code == 200
    assert (await _call(cast, upstream)).status_code == 200
    assert (await _call(cast, upstream, MESSAGES)).status_code == 200
    upstream.push(status=429, error={"error": {"message": "slow down", "type": "rate_limit_error"}})
    assert (await _call(cast, upstream)).status_code == 429
    dead = f"http://127.0.0.1:{free_port()}/v1"
    assert (await _call(cast, upstream, **{"X-Upstream-Base-Url": dead})).status_code == 502
    after = figures()

    def delta(name: str, **labels: str) -> float:
        return after.value(name, **labels) - before.value(name, **labels)

    assert delta("threadless_proxy_calls_total", provider="openai", upstream_status="200") == 2
    assert delta("threadless_proxy_calls_total", provider="anthropic", upstream_status="200") == 1
    assert delta("threadless_proxy_calls_total", provider="openai", upstream_status="429") == 1
    assert delta("threadless_proxy_calls_total", provider="openai", upstream_status="unreachable") == 1
    assert delta("threadless_proxy_added_latency_seconds_count", provider="openai") == 4
    assert delta("threadless_proxy_added_latency_seconds_count", provider="anthropic") == 1
    assert delta("threadless_decorate_total") == 5  # each call decorated its memory
    assert delta("threadless_decorate_degraded_total") == 0
    after.assert_bounded_labels(forbidden=("metrics-user-1", "lisbon", "sk-stub", cast.key_a))


async def test_a_call_forwarded_without_memory_counts_as_a_degraded_decorate(cast, upstream, monkeypatch):
    def database_down(**kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(proxy_services, "memory_decorate", database_down)
    before = figures()
    response = await _call(cast, upstream)
    assert response.status_code == 200 and response["X-Threadless-Degraded"] == "1"
    after = figures()
    assert (
        after.value("threadless_decorate_degraded_total", source="proxy")
        - before.value("threadless_decorate_degraded_total", source="proxy")
        == 1
    )
    assert (
        after.value("threadless_proxy_calls_total", provider="openai", upstream_status="200")
        - (before.value("threadless_proxy_calls_total", provider="openai", upstream_status="200"))
        == 1
    )
