"""The memory API over real processes: uvicorn web servers, a real Celery worker, a real broker
(the embedded filesystem broker under `make test`, Redis under `make test-services`) and a
database that refuses connections."""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from harness.servers import ThreadlessServer, free_port, services_mode

pytestmark = pytest.mark.services


def wait_for(predicate, timeout: float = 90.0, interval: float = 0.2):
    """Poll until `predicate()` is truthy (a bound on waiting, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError("condition not met in time")


def converse(client: httpx.Client, memory_id: str, text: str) -> httpx.Response:
    assert (
        client.post(
            f"/memories/{memory_id}/decorate", json={"messages": [{"role": "user", "content": text}]}
        ).status_code
        == 200
    )
    return client.post(
        f"/memories/{memory_id}/report", json={"messages": [{"role": "assistant", "content": "ok"}]}
    )


def processing(client: httpx.Client, memory_id: str) -> str:
    return client.get(f"/memories/{memory_id}").json()["processing"]


def test_a_real_worker_processes_the_outbox_rows_of_reports(live_worker_server):
    with live_worker_server.client() as client:
        memory = client.post("/memories", json={}).json()["id"]
        report = converse(client, memory, "I have a beagle called Biscuit.")
        assert report.status_code == 202
        # Durable before 202: readable at once, from another connection.
        with live_worker_server.client() as other:
            entries = other.get(f"/memories/{memory}/entries").json()["data"]
        assert [e["role"] for e in entries] == ["user", "assistant"]
        wait_for(lambda: processing(client, memory) == "processed")
        outbox = live_worker_server.manage(
            "shell",
            "-c",
            "from memories.models import Outbox; import json; "
            "print(json.dumps(list(Outbox.objects.values_list('attempts', flat=True))))",
        )
        assert json.loads(outbox.strip().splitlines()[-1]) == [1]


def test_reports_accepted_while_no_worker_runs_are_processed_when_it_returns(live_worker_server):
    server = live_worker_server
    with server.client() as client:
        memory = client.post("/memories", json={}).json()["id"]
        server.stop_worker()
        for i in range(3):
            assert converse(client, memory, f"message {i}").status_code == 202
        assert processing(client, memory) == "pending"
        server.start_worker()
        wait_for(lambda: processing(client, memory) == "processed")


def test_reports_accepted_while_the_broker_is_down_are_requeued_by_the_sweep():
    dead_broker = f"redis://127.0.0.1:{free_port()}/0"
    server = ThreadlessServer(env={"CELERY_BROKER_URL": dead_broker})
    try:
        server.start()
        with server.client() as client:
            memory = client.post("/memories", json={}).json()["id"]
            assert converse(client, memory, "hello while the broker is down").status_code == 202
            assert processing(client, memory) == "pending"
            # The broker comes back: processes started from now on reach the live one.
            live = dict(server.env)
            if services_mode():
                live["CELERY_BROKER_URL"] = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/15")
            else:
                live.pop("CELERY_BROKER_URL")  # the embedded filesystem broker
            server.env = live
            server.start_worker()
            # The periodic sweep (beat runs it every THREADLESS_OUTBOX_SWEEP_SECONDS) waits until a
            # row is older than that; age the row instead of sleeping, then run the real sweep.
            swept = server.manage(
                "shell",
                "-c",
                "from datetime import timedelta; from django.utils import timezone; "
                "from memories.models import Outbox; from memories.services import outbox_sweep; "
                "Outbox.objects.update(created_at=timezone.now() - timedelta(minutes=5)); "
                "print(outbox_sweep())",
            )
            assert swept.strip().splitlines()[-1] == "1"
            wait_for(lambda: processing(client, memory) == "processed")
        assert "not queued" in (server.var / "web.log").read_text()
    finally:
        server.stop()


def test_a_database_that_refuses_connections_gives_503_unavailable_and_readyz_says_so():
    refused = f"postgres://root@127.0.0.1:{free_port()}/threadless"
    server = ThreadlessServer(env={"DATABASE_URL": refused})
    try:
        server.start_web()
        key = "tl_proj_" + "A" * 10 + "b" * 32
        with server.client(key) as client:
            for response in (client.get("/memories"), client.post("/memories", json={})):
                assert response.status_code == 503
                error = response.json()["error"]
                assert error["code"] == "unavailable" and error["retryable"] is True
                assert error["request_id"] == response.headers["X-Request-Id"]
                assert int(response.headers["Retry-After"]) > 0
                assert "127.0.0.1" not in response.text and "Traceback" not in response.text
        assert httpx.get(server.url + "/healthz").status_code == 200
        ready = httpx.get(server.url + "/readyz")
        assert ready.status_code == 503
        assert ready.json()["checks"]["database"].startswith("down")
    finally:
        server.stop()


def test_a_chunked_body_over_the_limit_is_a_413_over_a_real_socket(live_server_proc):
    def chunks():
        for _ in range(2 * 1024):
            yield b"x" * 1024

    with live_server_proc.client() as client:
        memory = client.post("/memories", json={}).json()["id"]
        response = client.post(
            f"/memories/{memory}/decorate", content=chunks(), headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "payload_too_large"
        length = client.post(
            f"/memories/{memory}/decorate",
            content=b"x" * (1024 * 1024 + 1),
            headers={"Content-Type": "application/json"},
        )
        assert length.status_code == 413


def test_the_rate_limit_holds_across_two_server_processes_sharing_one_database(live_server_proc):
    first = live_server_proc
    second = ThreadlessServer(
        env={"DATABASE_URL": first.env["DATABASE_URL"], "THREADLESS_VAR_DIR": str(first.var)}
    )
    try:
        second.start_web()
        limit = 10

        def attempt():
            project = json.loads(
                first.manage("create_project", "limited", "--rate-limit", str(limit), "--json")
            )
            key = json.loads(first.manage("create_key", "--project", project["id"], "--json"))["key"]
            window = int(time.time() // 60)
            clients = [first.client(key), second.client(key)]
            with ThreadPoolExecutor(max_workers=6) as pool:
                statuses = list(
                    pool.map(lambda i: clients[i % 2].get("/memories").status_code, range(3 * limit))
                )
            for c in clients:
                c.close()
            return statuses, window == int(time.time() // 60)

        for _ in range(3):
            statuses, one_window = attempt()
            if one_window:
                break
        assert statuses.count(200) == limit
        assert statuses.count(429) == 2 * limit
    finally:
        second.stop()


def test_concurrent_retries_with_one_idempotency_key_store_the_report_once(live_server_proc):
    with live_server_proc.client() as client:
        memory = client.post("/memories", json={}).json()["id"]
        body = {"messages": [{"role": "assistant", "content": "stored once"}]}

        def send(_):
            with live_server_proc.client() as c:
                return c.post(
                    f"/memories/{memory}/report", json=body, headers={"Idempotency-Key": "same-retry"}
                )

        with ThreadPoolExecutor(max_workers=4) as pool:
            responses = list(pool.map(send, range(4)))
        assert {r.status_code for r in responses} == {202}
        assert len({r.content for r in responses}) == 1
        entries = client.get(f"/memories/{memory}/entries").json()["data"]
        assert [e["content"] for e in entries] == ["stored once"]
