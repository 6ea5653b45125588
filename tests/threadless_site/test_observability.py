"""A live install's operations surface, served as `make serve` serves it (granian with two worker
processes, a Celery worker with a prefork pool of two): /metrics after a scripted workload (the
counters of every process added up match what was sent, no label carries an id, a key or user
text), the token rule, the JSON log lines of the web and worker processes
(THREADLESS_LOG_FORMAT=json), and the figures recorded where their events happen."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.parser import text_string_to_metric_families

from common import metrics
from harness.servers import ThreadlessServer
from projects import services as project_services
from tests.fixtures.api import error_of, report
from tests.fixtures.metrics import Figures, figures

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "metrics-token-for-tests-0123456789"


def scrape(server: ThreadlessServer) -> Figures:
    answer = httpx.get(server.url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    return Figures(answer.text)


@pytest.fixture(scope="module")
def server():
    server = ThreadlessServer(
        worker=True,
        env={"THREADLESS_METRICS_TOKEN": TOKEN, "THREADLESS_LOG_FORMAT": "json"},
        log_level="info",
        web_workers=2,
        pool_processes=2,
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
        # The export streams from a view thread through granian's `send`; the import takes it back.
        exported = client.get(f"/memories/{memory}/export")
        assert exported.status_code == 200 and exported.headers["content-type"] == "application/x-ndjson"
        assert json.loads(exported.text.splitlines()[-1])["type"] == "end"
        imported = client.post(
            "/memories/import", content=exported.content, headers={"Content-Type": "application/x-ndjson"}
        )
        assert imported.status_code == 201, imported.text
    kind = "memories.tasks.process_outbox"
    deadline = time.time() + 90
    while time.time() < deadline:  # the worker's job counters land when its task returns
        after = scrape(server)
        done = after.value("threadless_jobs_total", kind=kind, outcome="success") - before.value(
            "threadless_jobs_total", kind=kind, outcome="success"
        )
        if done >= 1 and after.value("threadless_outbox_depth") == 0:
            break
        time.sleep(0.3)

    def delta(name: str, **labels: str) -> float:
        return after.value(name, **labels) - before.value(name, **labels)

    decorate_route = "v1/memories/<str:memory_id>/decorate"
    report_route = "v1/memories/<str:memory_id>/report"
    assert delta("threadless_http_requests_total", route=decorate_route, method="POST", status="200") == 5
    assert delta("threadless_http_requests_total", route=report_route, method="POST", status="202") == 5
    assert delta("threadless_http_requests_total", route=report_route, method="POST", status="400") == 1
    assert delta("threadless_http_requests_total", route=report_route, method="POST", status="404") == 1
    assert (
        delta("threadless_http_requests_total", route="v1/memories/<str:memory_id>/facts", status="200") == 1
    )
    assert (
        delta("threadless_http_requests_total", route="v1/memories/<str:memory_id>/export", status="200") == 1
    )
    assert delta("threadless_http_requests_total", route="v1/memories/import", status="201") == 1
    assert delta("threadless_http_request_duration_seconds_count", route=decorate_route) == 5
    assert delta("threadless_decorate_total") == 5
    assert delta("threadless_decorate_window_messages_count") == 5
    assert delta("threadless_report_total", outcome="accepted") == 5
    assert delta("threadless_report_total", outcome="rejected") == 2
    assert delta("threadless_report_messages_total") == 5
    assert delta("threadless_facts_extracted_total", extractor="rules", outcome="created") >= 1
    assert done >= 1  # a prefork pool process's counters are in the web process's exposition
    assert delta("threadless_job_duration_seconds_count", kind=kind) >= done
    assert after.value("threadless_outbox_depth") == 0
    after.assert_bounded_labels(forbidden=(memory, "passport", "lisbon", "metrics-1"))
    # Every process that recorded wrote its own files: web workers and pool processes alike.
    assert len(list((server.var / "metrics").glob("counter_*.db"))) >= 2

    # The worker's lines are JSON too (Celery's own handlers take the format).
    lines = (server.var / "worker.log").read_text().splitlines()
    ran = [json.loads(line) for line in lines if "succeeded in" in line]
    assert ran and all(r["logger"] == "celery.app.trace" and "timestamp" in r for r in ran)


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


def test_the_docs_metric_table_names_every_metric_exported_and_only_those(client, settings, db):
    """docs/deployment.md's table against what /metrics exports: every metric common.metrics
    defines (a counter by its `_total` sample) and the gauges read at scrape time."""
    table = (ROOT / "docs/deployment.md").read_text().split("| metric | labels | what |", 1)[1]
    documented = set()
    for row in table.split("\n\n", 1)[0].strip().splitlines()[1:]:
        names = re.findall(r"`([^`]+)`", row.split("|")[1])
        stem = names[0].removesuffix("_total")
        documented |= {stem + name[1:] if name.startswith("…") else name for name in names}
    defined = {
        wrapper._name + ("_total" if wrapper._type == "counter" else "")
        for wrapper in vars(metrics).values()
        if isinstance(wrapper, MetricWrapperBase)
    }
    settings.THREADLESS_METRICS_TOKEN = TOKEN
    answer = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content.decode()
    gauges = {family.name for family in text_string_to_metric_families(answer) if family.type == "gauge"}
    assert gauges and documented == defined | gauges


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


needs_metrics = pytest.mark.skipif(not metrics.ON, reason="THREADLESS_METRICS is off")


@needs_metrics
def test_rate_limit_and_plan_refusals_are_counted_by_code(cast, settings):
    settings.THREADLESS_RATE_LIMIT_PER_MINUTE = 1
    client = cast.api(project_services.key_create(project=cast.project_a)[1])
    before = figures()
    statuses = [client.get("/v1/memories").status_code for _ in range(3)]
    limited = statuses.count(429)
    assert limited >= 1  # three calls at one a minute: at most one minute boundary between two of them
    settings.THREADLESS_RATE_LIMIT_PER_MINUTE = 0
    cast.project_b.allowance_memories = 1
    cast.project_b.save()
    assert cast.b.post("/v1/memories", {}, format="json").status_code == 201
    error_of(cast.b.post("/v1/memories", {}, format="json"), 429, "quota_exceeded")
    after = figures()
    assert (
        after.value("threadless_refusals_total", code="rate_limited")
        - before.value("threadless_refusals_total", code="rate_limited")
        == limited
    )
    assert (
        after.value("threadless_refusals_total", code="quota_exceeded")
        - before.value("threadless_refusals_total", code="quota_exceeded")
        == 1
    )


@needs_metrics
def test_error_digests_are_counted_by_task_type_and_error_type_never_by_task_id(cast, memory_a):
    memory_a.policy = {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}}
    memory_a.save(update_fields=["policy"])
    before = figures()
    response = report(
        cast.a,
        memory_a.id,
        [{"role": "assistant", "content": "Looking that up."}],
        failures=[
            {"task_id": "crm.lookup-customer-4711", "error": "ConnectException: refused"},
            {"task_id": "billing.charge", "error": "TimeoutError: 30 s"},
        ],
    )
    assert response.status_code == 202, response.content
    after = figures()
    assert (
        after.value("threadless_error_digests_total", task_type="reported", error_type="unknown")
        - (before.value("threadless_error_digests_total", task_type="reported", error_type="unknown"))
        == 2
    )
    after.assert_bounded_labels(forbidden=("crm.lookup", "billing", "4711"))


@needs_metrics
def test_background_jobs_are_counted_by_kind_and_outcome_with_their_run_time(db, monkeypatch):
    from memories import services as memory_services
    from memories.tasks import outbox_sweep

    kind = "memories.tasks.outbox_sweep"
    before = figures()
    assert outbox_sweep.apply().successful()

    def broken():
        raise RuntimeError("sweep failed")

    monkeypatch.setattr(memory_services, "outbox_sweep", broken)
    assert outbox_sweep.apply().failed()
    after = figures()

    def delta(name: str, **labels: str) -> float:
        return after.value(name, **labels) - before.value(name, **labels)

    assert delta("threadless_jobs_total", kind=kind, outcome="success") == 1
    assert delta("threadless_jobs_total", kind=kind, outcome="failure") == 1
    assert delta("threadless_job_duration_seconds_count", kind=kind) == 2


def test_with_tracing_off_nothing_of_opentelemetry_is_imported(tmp_path):
    """The web application and the Celery app load without importing OpenTelemetry (installed or not)."""
    probe = (
        "import sys, threadless_site.asgi, threadless_site.celery, memories.services; "
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    env = {**os.environ, "THREADLESS_VAR_DIR": str(tmp_path), "THREADLESS_TRACING": "false"}
    env.pop("DATABASE_URL", None)
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("log_format", ["plain", "json"])
def test_the_worker_log_lines_pass_the_redacting_filter_and_take_the_log_format(tmp_path, log_format):
    """Celery replaces the root logger's handlers at worker start: its own handlers redact too, and
    write JSON lines under THREADLESS_LOG_FORMAT=json."""
    probe = (
        "import logging, django\n"
        "from threadless_site.celery import app\n"
        "django.setup()\n"
        "app.log.setup(loglevel='INFO')\n"  # what `celery worker` does before it runs tasks
        "logging.getLogger('threadless.worker').warning('upstream refused api_key=%s', "
        "'sk-live-1234567890abcdef1234')\n"
        "from celery.utils.log import get_task_logger\n"
        "get_task_logger('memories.tasks').info('token=ghp_abcdefghijklmnopqrstuvwxyz0123456789')\n"
    )
    env = {**os.environ, "THREADLESS_VAR_DIR": str(tmp_path), "THREADLESS_LOG_FORMAT": log_format}
    env.pop("DATABASE_URL", None)
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if "refused" in line or "token=" in line]
    assert len(lines) == 2, out.stderr
    assert "sk-live-1234567890abcdef1234" not in out.stderr and "ghp_abcdefghij" not in out.stderr
    if log_format == "json":
        first, second = [json.loads(line) for line in lines]
        assert first["logger"] == "threadless.worker" and first["level"] == "WARNING"
        assert first["message"] == "upstream refused api_key=[redacted]"
        assert second["logger"] == "memories.tasks" and "timestamp" in second
    else:
        assert not any(line.startswith("{") for line in lines)
