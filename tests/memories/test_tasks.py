"""With a REAL worker: report → facts appear; the worker killed mid-job → the job completes after a
restart, exactly once; delete by metadata → nothing findable and the receipt counts are right."""

from __future__ import annotations

import json
import signal
import tempfile
import time
from pathlib import Path

import pytest

from harness.servers import ThreadlessServer

pytestmark = pytest.mark.services


@pytest.fixture(scope="module")
def worker_server():
    block_dir = Path(tempfile.mkdtemp(prefix="tl-block-"))
    server = ThreadlessServer(
        worker=True,
        env={
            "THREADLESS_OUTBOX_STALE_SECONDS": "2",
            "THREADLESS_FACT_EXTRACTOR": "tests.fixtures.blocking_extractor.BlockingRuleExtractor",
            "TL_TEST_BLOCK_DIR": str(block_dir),
            "THREADLESS_EMBEDDINGS": "off",  # the receipts' index_rows below count recall rows only
        },
    ).start()
    server.block_dir = block_dir
    yield server
    (block_dir / "block").unlink(missing_ok=True)
    server.stop()


def wait_for(predicate, timeout: float = 60.0, every: float = 0.2, between=None):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        if between:
            between()
        time.sleep(every)
    raise AssertionError("condition not met in time")


def talk(client, memory_id: str, user: str, assistant: str) -> None:
    assert (
        client.post(
            f"/memories/{memory_id}/decorate", json={"messages": [{"role": "user", "content": user}]}
        ).status_code
        == 200
    )
    assert (
        client.post(
            f"/memories/{memory_id}/report", json={"messages": [{"role": "assistant", "content": assistant}]}
        ).status_code
        == 202
    )


def facts(client, memory_id: str) -> list[str]:
    return sorted(f["text"] for f in client.get(f"/memories/{memory_id}/facts").json()["data"])


def shell(server: ThreadlessServer, code: str) -> str:
    return server.manage("shell", "-c", code).strip().splitlines()[-1]


def test_a_report_turns_into_facts_and_search_hits(worker_server):
    with worker_server.client() as client:
        memory = client.post("/memories", json={"metadata": {"user": "live-1"}}).json()["id"]
        talk(
            client,
            memory,
            "Hi, I'm Dana. I live in Lisbon and I'm allergic to peanuts.",
            "I live in the cloud!",
        )
        wait_for(lambda: client.get(f"/memories/{memory}").json()["processing"] == "processed")
        assert facts(client, memory) == [
            "User is allergic to peanuts",
            "User lives in Lisbon",
            "User's name is Dana",
        ]
        hits = client.post(f"/memories/{memory}/search", json={"query": "peanuts allergy"}).json()["data"]
        assert hits and "allergic to peanuts" in hits[0]["snippet"] and hits[0]["turn"] == 1


def test_a_worker_killed_mid_job_finishes_it_after_a_restart_exactly_once(worker_server):
    server = worker_server
    runs = server.block_dir / "runs.log"
    runs.write_text("")
    (server.block_dir / "block").touch()
    with server.client() as client:
        memory = client.post("/memories", json={"metadata": {"user": "live-2"}}).json()["id"]
        talk(client, memory, "I live in Oslo. I work as a pharmacist.", "Noted.")
        wait_for(lambda: runs.read_text().count("start") == 1)  # the worker is inside the job now
        # Read-your-writes while extraction runs: the report is in the next decorate, verbatim.
        answer = client.post(
            f"/memories/{memory}/decorate",
            json={"messages": [{"role": "user", "content": "What do I do for work?"}], "store": False},
        ).json()
        assert answer["messages"] == [
            {"role": "user", "content": "I live in Oslo. I work as a pharmacist."},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "What do I do for work?"},
        ]
        server.stop_worker(signal.SIGKILL)
        assert client.get(f"/memories/{memory}").json()["processing"] == "pending"
        assert facts(client, memory) == []
        (server.block_dir / "block").unlink()
        server.start_worker()
        sweep = "from memories.services import outbox_sweep; print(outbox_sweep())"
        wait_for(
            lambda: client.get(f"/memories/{memory}").json()["processing"] == "processed",
            every=1.0,
            between=lambda: shell(server, sweep),
        )
        assert facts(client, memory) == ["User lives in Oslo", "User works as a pharmacist"]
        row = json.loads(
            shell(
                server,
                (
                    "import json; from memories.models import Outbox; "
                    f"r = Outbox.objects.get(memory_id='{memory}'); "
                    "print(json.dumps({'attempts': r.attempts, 'done': r.processed_at is not None}))"
                ),
            )
        )
        assert row == {"attempts": 2, "done": True}  # claimed twice, completed once
        # A late duplicate delivery does nothing: the row is already processed.
        assert (
            shell(
                server,
                (
                    "from memories.models import Outbox; from memories.services import outbox_process; "
                    f"print(outbox_process(outbox_id=Outbox.objects.get(memory_id='{memory}').id))"
                ),
            )
            == "False"
        )
        assert facts(client, memory) == ["User lives in Oslo", "User works as a pharmacist"]


def test_delete_by_metadata_leaves_nothing_findable_with_right_counts(worker_server):
    server = worker_server
    with server.client() as client:
        ids = []
        for n in range(2):
            memory = client.post("/memories", json={"metadata": {"user": "gone", "n": n}}).json()["id"]
            talk(client, memory, f"I live in Bergen and my locker code is 55{n}1.", "Noted.")
            talk(client, memory, "I'm allergic to latex.", "Noted too.")
            ids.append(memory)
        keep = client.post("/memories", json={"metadata": {"user": "stays"}}).json()["id"]
        talk(client, keep, "My locker code is 9999 in Bergen.", "ok")
        for memory in ids + [keep]:
            wait_for(lambda m=memory: client.get(f"/memories/{m}").json()["processing"] == "processed")
        answer = client.delete("/memories", params={"metadata.user": "gone"})
        assert answer.status_code == 200
        deleted = answer.json()["deleted"]
        assert deleted["memories"] == 2 and deleted["entries"] == 8 and deleted["turns"] == 4
        assert deleted["facts"] == 4 and deleted["index_rows"] == 8 and deleted["outbox"] == 4
        for memory in ids:
            assert client.get(f"/memories/{memory}").status_code == 404
            assert client.post(f"/memories/{memory}/search", json={"query": "locker"}).status_code == 404
        leftovers = shell(
            server,
            (
                "from django.db import connection; c = connection.cursor(); "
                "c.execute(\"SELECT count(*) FROM memories_recall WHERE body LIKE '%%Bergen%%'\"); "
                "print(c.fetchone()[0])"
            ),
        )
        assert leftovers == "1"  # only the memory that stays
        hits = client.post(f"/memories/{keep}/search", json={"query": "locker code"}).json()["data"]
        assert [h["snippet"] for h in hits] == ["My locker code is 9999 in Bergen."]
