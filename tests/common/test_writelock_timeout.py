"""A stuck holder of the SQLite writers' lock (common.writelock) makes a write fail with a 503 in
the API's error shape after THREADLESS_WRITE_LOCK_TIMEOUT, instead of hanging every writer.

The attacker is another local process that holds the lock file (`flock -x …lock sleep`)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from django.db import connection

from common.writelock import WriteLockTimeout, WriterLock, writer_lock
from memories.services import memory_create

HOLD = """
import fcntl, sys
f = open(sys.argv[1] + ".lock", "ab")
fcntl.flock(f.fileno(), fcntl.LOCK_EX)
sys.stdout.write("held\\n"); sys.stdout.flush()
sys.stdin.readline()
"""


@pytest.fixture
def hold():
    holders = []

    def start(path: str):
        holder = subprocess.Popen(
            [sys.executable, "-c", HOLD, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        holders.append(holder)
        assert holder.stdout.readline().strip() == "held"
        return holder

    yield start
    for holder in holders:
        holder.kill()
        holder.wait()


def test_a_writer_gives_up_after_the_timeout_while_another_process_holds_the_lock(tmp_path, hold):
    path = str(tmp_path / "db.sqlite3")
    hold(path)
    started = time.monotonic()
    with pytest.raises(WriteLockTimeout):
        WriterLock(path, timeout=0.3).__enter__()
    assert 0.3 <= time.monotonic() - started < 3


def test_a_writer_goes_in_once_the_holder_lets_go_within_the_timeout(tmp_path, hold):
    path = str(tmp_path / "db.sqlite3")
    holder = hold(path)
    holder.stdin.write("go\n")
    holder.stdin.flush()
    lock = WriterLock(path, timeout=5)
    with lock:
        pass


@pytest.mark.django_db(transaction=True)
def test_a_write_under_a_stuck_lock_is_a_503_in_the_error_shape(cast, hold, settings):
    if connection.vendor != "sqlite" or writer_lock(str(connection.settings_dict["NAME"])) is None:
        pytest.skip("the SQLite writers' lock")
    settings.THREADLESS_WRITE_LOCK_TIMEOUT = 0.5
    memory, _ = memory_create(project=cast.project_a)
    hold(str(connection.settings_dict["NAME"]))
    started = time.monotonic()
    answer = cast.a.post(
        f"/v1/memories/{memory.id}/decorate", {"messages": [{"role": "user", "content": "hi"}]}, format="json"
    )
    assert time.monotonic() - started < 5
    assert answer.status_code == 503
    error = answer.json()["error"]
    assert error["code"] == "unavailable" and error["request_id"].startswith("req_")
    assert answer["Retry-After"]
