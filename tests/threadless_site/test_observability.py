"""A live install's operations surface: /metrics after a scripted workload on a real server and
worker (counters match what was sent, no label carries an id, a key or user text), the token
rule, and the JSON log lines of the same install (THREADLESS_LOG_FORMAT=json)."""

from __future__ import annotations

import json
import re
import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from harness.servers import ThreadlessServer

TOKEN = "metrics-token-for-tests-0123456789"
LABEL_VALUE = re.compile(r"[A-Za-z0-9_.<>:/+-]{0,80}")


def scrape(server: ThreadlessServer) -> dict[tuple[str, tuple], float]:
    answer = httpx.get(server.url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    samples = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict, name: str, **labels: str) -> float:
    return sum(
        v
        for (n, found), v in samples.items()
        if n == name and all(dict(found).get(k) == want for k, want in labels.items())
    )


@pytest.fixture(scope="module")
def server():
    server = ThreadlessServer(
        worker=True,
        env={"THREADLESS_METRICS_TOKEN": TOKEN, "THREADLESS_LOG_FORMAT": "json"},
        log_level="info",
    ).start()
    yield server
    server.stop()


@pytest.mark.services
def test_a_scripted_workload_is_counted_exactly_and_no_label_carries_an_id_or_text(server):
    secret_text = "my passport number is X1234567"
    with server.client() as client:
        memory = client.post("/memories", json={"metadata": {"user": "metrics-1"}}).json()["id"]
        before = scrape(server)
        for i in range(5):
            assert (
                client.post(
                    f"/memories/{memory}/decorate",
                    json={"messages": [{"role": "user", "content": f"I live in Lisbon. {secret_text} #{i}"}]},
                ).status_code
                == 200
            )
            assert (
                client.post(
                    f"/memories/{memory}/report",
                    json={"messages": [{"role": "assistant", "content": "Noted."}]},
                ).status_code
                == 202
            )
        assert client.post(f"/memories/{memory}/report", json={"messages": "nope"}).status_code == 400
        assert client.post("/memories/mem_missing/report", json={"messages": []}).status_code == 404
        assert client.get(f"/memories/{memory}/facts").status_code == 200
        deadline = time.time() + 60
        while (
            client.get(f"/memories/{memory}").json()["processing"] != "processed" and time.time() < deadline
        ):
            time.sleep(0.2)
    deadline = time.time() + 30
    while time.time() < deadline:  # the worker's job counters land when its task returns
        after = scrape(server)
        done = value(
            after, "threadless_jobs_total", kind="memories.tasks.process_outbox", outcome="success"
        ) - value(before, "threadless_jobs_total", kind="memories.tasks.process_outbox", outcome="success")
        if done >= 1 and value(after, "threadless_outbox_depth") == 0:
            break
        time.sleep(0.3)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    decorate_route = "v1/memories/<str:memory_id>/decorate"
    report_route = "v1/memories/<str:memory_id>/report"
    assert delta("threadless_http_requests_total", route=decorate_route, method="POST", status="200") == 5
    assert delta("threadless_http_requests_total", route=report_route, method="POST", status="202") == 5
    assert delta("threadless_http_requests_total", route=report_route, method="POST", status="400") == 1
    assert delta("threadless_http_requests_total", route=report_route, method="POST", status="404") == 1
    assert (
        delta("threadless_http_requests_total", route="v1/memories/<str:memory_id>/facts", status="200") == 1
    )
    assert delta("threadless_http_request_duration_seconds_count", route=decorate_route) == 5
    assert delta("threadless_decorate_total") == 5
    assert delta("threadless_decorate_window_messages_count") == 5
    assert delta("threadless_report_total", outcome="accepted") == 5
    assert delta("threadless_report_total", outcome="rejected") == 2
    assert delta("threadless_report_messages_total") == 5
    assert delta("threadless_facts_extracted_total", extractor="rules", outcome="created") >= 1
    assert done >= 1  # a prefork child's counters are in the same exposition
    assert value(after, "threadless_outbox_depth") == 0

    for (name, labels), _ in after.items():
        for label, found in labels:
            assert LABEL_VALUE.fullmatch(found), (name, label, found)
            assert memory not in found and "mem_" not in found and "tl_" not in found
            assert "passport" not in found.lower() and "lisbon" not in found.lower()


@pytest.mark.services
def test_json_log_lines_carry_the_request_id_project_route_and_duration(server):
    with server.client() as client:
        memory = client.post("/memories", json={}).json()["id"]
        answer = client.post(
            f"/memories/{memory}/decorate", json={"messages": [{"role": "user", "content": "hi"}]}
        )
        assert answer.status_code == 200
        request_id = answer.headers["X-Request-Id"]
        project_id = server.demo["project_id"]
    deadline = time.time() + 10
    while time.time() < deadline:
        lines = [line for line in (server.var / "web.log").read_text().splitlines() if line.startswith("{")]
        found = [json.loads(line) for line in lines if request_id in line]
        if found:
            break
        time.sleep(0.2)
    records = [json.loads(line) for line in lines]  # every JSON-looking line parses
    assert found, lines[-5:]
    line = found[0]
    assert line["logger"] == "threadless.request" and line["level"] == "INFO"
    assert line["route"] == "v1/memories/<str:memory_id>/decorate" and line["status"] == 200
    assert line["project_id"] == project_id and isinstance(line["duration_ms"], float)
    assert "T" in line["timestamp"] and memory not in json.dumps(line)
    assert any(r["logger"] == "threadless.request" and r["route"] == "v1/memories" for r in records)


def test_metrics_is_a_404_without_a_token_setting(client, settings):
    settings.THREADLESS_METRICS_TOKEN = ""
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer anything").status_code == 404


def test_metrics_needs_the_exact_bearer_token(client, settings, db):
    settings.THREADLESS_METRICS_TOKEN = TOKEN
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Basic {TOKEN}").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}x").status_code == 401
    answer = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert answer.status_code == 200
    names = {family.name for family in text_string_to_metric_families(answer.content.decode())}
    assert {"threadless_outbox_depth", "threadless_outbox_oldest_age_seconds"} <= names


def test_metrics_answers_get_only(client, settings):
    settings.THREADLESS_METRICS_TOKEN = TOKEN
    assert client.post("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 405


def test_a_method_nobody_defined_is_counted_as_other(client, settings, db):
    settings.THREADLESS_METRICS_TOKEN = TOKEN
    client.generic("BREW-" + "A" * 200, "/healthz")
    answer = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content.decode()
    assert "BREW" not in answer
    if "threadless_http_requests_total" in answer:  # recording is on (THREADLESS_METRICS)
        assert 'method="other",route="healthz"' in answer
