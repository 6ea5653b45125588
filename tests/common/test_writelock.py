"""The SQLite writers' lock (common.writelock): writers wait their turn on a flock and are let in
the moment it is free, across threads and processes; the hot write paths take it."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from django.db import connection

from common import counters
from common.db import plain_cursor, sqlite_write_transaction, write_atomic
from common.writelock import WriterLock, writer_lock

HOLD = """
import fcntl, sys, time
f = open(sys.argv[1] + ".lock", "ab")
fcntl.flock(f.fileno(), fcntl.LOCK_EX)
sys.stdout.write("held\\n"); sys.stdout.flush()
sys.stdin.readline()
"""


def _taken_elsewhere(path: str) -> bool:
    """Whether another open file holds the lock now (a try that doesn't wait)."""
    with open(path + ".lock", "ab") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        return False


def _in_thread(fn) -> tuple[threading.Thread, threading.Event]:
    done = threading.Event()

    def run():
        fn()
        done.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, done


def test_a_second_thread_waits_for_the_holder_and_goes_in_as_soon_as_it_lets_go(tmp_path):
    lock = WriterLock(str(tmp_path / "db.sqlite3"))
    order = []
    with lock:
        thread, done = _in_thread(lambda: (lock.__enter__(), order.append("second"), lock.__exit__()))
        assert not done.wait(0.3)  # the same lock object, another thread: excluded, not shared
        order.append("first")
    assert done.wait(5)
    thread.join()
    assert order == ["first", "second"]
    assert not _taken_elsewhere(lock.path[:-5])


def test_a_process_holding_the_lock_keeps_writers_of_another_process_out_until_it_exits(tmp_path):
    path = str(tmp_path / "db.sqlite3")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        lock = WriterLock(path)
        thread, done = _in_thread(lambda: (lock.__enter__(), lock.__exit__()))
        assert not done.wait(0.3)
        holder.kill()  # a dead holder's lock is dropped by the kernel
        assert done.wait(5)
        thread.join()
    finally:
        holder.kill()
        holder.wait()


def test_a_forked_child_does_not_share_its_parents_hold(tmp_path):
    lock = WriterLock(str(tmp_path / "db.sqlite3"))
    with lock:
        pid = os.fork()
        if pid == 0:  # the forking thread in the child: its own file, so the parent's hold keeps it out
            code = 3
            try:
                signal.signal(signal.SIGALRM, lambda *_: os._exit(0))  # still waiting after 0.3 s: right
                signal.setitimer(signal.ITIMER_REAL, 0.3)
                lock.__enter__()
                code = 1  # went in beside its parent: the inherited file was shared
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_an_in_memory_database_has_no_lock_and_a_file_one_lock_per_path(tmp_path):
    assert writer_lock(":memory:") is None
    assert writer_lock("file:memorydb_default?mode=memory&cache=shared") is None
    assert writer_lock(str(tmp_path / "a.sqlite3")) is writer_lock(str(tmp_path / "a.sqlite3"))


@pytest.mark.django_db(transaction=True)
def test_the_hot_paths_write_transaction_holds_the_lock_and_lets_go_after_commit_or_error():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's write transaction")
    path = str(connection.settings_dict["NAME"])
    if writer_lock(path) is None:
        pytest.skip("an in-memory test database")
    with plain_cursor() as cursor, sqlite_write_transaction(cursor):
        assert _taken_elsewhere(path)
    assert not _taken_elsewhere(path)
    with pytest.raises(RuntimeError), plain_cursor() as cursor, sqlite_write_transaction(cursor):
        raise RuntimeError("boom")
    assert not _taken_elsewhere(path)


@pytest.mark.django_db(transaction=True)
def test_a_write_of_many_statements_holds_the_lock_for_its_transaction_and_lets_go_after_it():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's write transaction")
    path = str(connection.settings_dict["NAME"])
    if writer_lock(path) is None:
        pytest.skip("an in-memory test database")
    with write_atomic():
        assert connection.in_atomic_block and _taken_elsewhere(path)
        with write_atomic():  # nested: a savepoint, and the outer block's hold
            pass
        assert _taken_elsewhere(path)
    assert not _taken_elsewhere(path)
    with pytest.raises(RuntimeError), write_atomic():
        raise RuntimeError("boom")
    assert not _taken_elsewhere(path) and not connection.in_atomic_block


def test_a_counter_write_waits_for_the_lock_and_then_counts(tmp_path):
    path = str(tmp_path / "counters.sqlite3")
    store = counters.FileCounters(path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        seen = []
        thread, done = _in_thread(
            lambda: seen.append(store.read_and_incr("gen", [("k", 60, True), ("v", 60, False)]))
        )
        assert not done.wait(0.3)
        assert store.get("k") == 0  # reads take no lock
        started = time.monotonic()
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert done.wait(5)
        assert time.monotonic() - started < 1
        thread.join()
    finally:
        holder.kill()
        holder.wait()
    assert seen == [(0, [1, 1])]
    assert not _taken_elsewhere(path)
