"""serving.balance: `threadless-serve`'s parent hands each connection to the worker process
holding the fewest, restarts a worker that dies, and stops gracefully. Real processes,
real sockets: the server is started as `make serve` starts it, serving a tiny app that answers
its process id."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from serving import balance
from threadless_site import serve

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.live, pytest.mark.timeout(120),
              pytest.mark.skipif(not balance.supported, reason="needs socket.send_fds (POSIX)")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Conn:
    """One keep-alive HTTP/1.1 connection."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)

    def get(self, path: str = "/") -> str:
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
        data = b""
        while b"\r\n\r\n" not in data:
            data += self.sock.recv(4096)
        head, body = data.split(b"\r\n\r\n", 1)
        assert head.startswith(b"HTTP/1.1 200"), head
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        while len(body) < length:
            body += self.sock.recv(4096)
        return body.decode()

    def close(self) -> None:
        self.sock.close()


def _settled(port: int, left: int = 0) -> None:
    """Wait until the server holds no more than `left` connections (its workers have seen the others
    close, and so have told the parent), so the next burst meets the counts the test means."""
    deadline = time.monotonic() + 15
    suffix = f":{port:04X}"
    while time.monotonic() < deadline:
        # The server's side of a connection (local port = the server's) in any state but LISTEN (0A): a
        # closed one stays (CLOSE_WAIT, LAST_ACK) until its worker has closed it.
        held = [line for name in ("/proc/net/tcp", "/proc/net/tcp6") if os.path.exists(name)
                for line in open(name).read().splitlines()[1:]
                if line.split()[1].endswith(suffix) and line.split()[3] != "0A"]
        if len(held) <= left:
            time.sleep(0.05)  # the worker's note on its way to the parent
            return
        time.sleep(0.05)
    raise AssertionError("the server kept connections the client closed")


def _close_all(opened: list[tuple[Conn, str]], port: int, left: int = 0) -> None:
    for conn, _ in opened:
        conn.close()
    _settled(port, left)


def _burst(port: int, n: int) -> list[tuple[Conn, str]]:
    """n connections opened back to back (as a client pool opens them), then one request on each."""
    conns = [Conn(port) for _ in range(n)]
    return [(c, c.get()) for c in conns]


@pytest.fixture
def server():
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "THREADLESS_WEB_BALANCE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "threadless_site.serve", "--app", "tests.serving.pid_app:app",
                             "--port", str(port), "--workers", "2", "--graceful-timeout", "5"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    pids: set[str] = set()
    while len(pids) < 2:  # both workers up and answering
        assert time.monotonic() < deadline and proc.poll() is None, proc.stdout.read() if proc.poll() is not None else "slow start"
        try:
            opened = _burst(port, 4)
        except OSError:
            time.sleep(0.2)
            continue
        pids |= {pid for _, pid in opened}
        _close_all(opened, port)
    yield proc, port
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_a_burst_of_keep_alive_connections_is_spread_evenly_over_the_workers(server):
    _, port = server
    for _ in range(5):
        opened = _burst(port, 16)
        assert sorted(Counter(pid for _, pid in opened).values()) == [8, 8]
        more = _burst(port, 5)  # on top of the 16 still open: 11 / 10
        assert sorted(Counter(pid for _, pid in opened + more).values()) == [10, 11]
        _close_all(opened + more, port)


def test_closed_connections_are_counted_back_so_new_ones_go_to_the_emptier_worker(server):
    _, port = server
    opened = _burst(port, 16)
    first = opened[0][1]
    _close_all([(conn, pid) for conn, pid in opened if pid == first], port, left=8)
    fresh = _burst(port, 8)
    assert {pid for _, pid in fresh} == {first}  # all 8 to the worker that now holds none


def test_a_worker_that_dies_is_started_again_and_the_other_keeps_serving(server):
    proc, port = server
    victim = int(_burst(port, 1)[0][1])
    os.kill(victim, signal.SIGKILL)
    time.sleep(0.3)
    survivors = {pid for _, pid in _burst(port, 4)}  # no connection is handed to the dead one
    assert str(victim) not in survivors
    deadline = time.monotonic() + 30
    while True:
        pids = {pid for _, pid in _burst(port, 8)}
        if len(pids) == 2:
            break
        assert time.monotonic() < deadline, "the worker was not started again"
        time.sleep(0.3)
    assert str(victim) not in pids


def test_sigterm_lets_a_running_request_finish_then_stops_every_process(server):
    proc, port = server
    workers = {pid for _, pid in _burst(port, 4)}
    slow = Conn(port)
    slow.sock.sendall(b"GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
    time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    answer = slow.sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 200"), answer
    assert proc.wait(timeout=30) == 0
    for pid in workers:
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid), 0)
    with pytest.raises(OSError):
        Conn(port)
    assert "Traceback" not in proc.stdout.read()


def test_one_worker_or_balance_off_is_uvicorns_own_server(monkeypatch):
    calls = []
    monkeypatch.setattr(balance, "run", lambda config, workers: calls.append(("balance", workers)))
    import uvicorn

    monkeypatch.setattr(uvicorn, "run", lambda app, **options: calls.append(("uvicorn", options["workers"])))
    monkeypatch.setenv("THREADLESS_ACCESS_LOG", "0")  # serve.main sets it; restored after the test
    monkeypatch.delenv("THREADLESS_WEB_BALANCE", raising=False)
    serve.main(["--workers", "2"])
    serve.main(["--workers", "1"])
    monkeypatch.setenv("THREADLESS_WEB_BALANCE", "0")
    serve.main(["--workers", "2"])
    assert calls == [("balance", 2), ("uvicorn", 1), ("uvicorn", 2)]
    monkeypatch.setenv("THREADLESS_WEB_BALANCE", "sometimes")
    with pytest.raises(SystemExit) as exit_:
        serve.main(["--workers", "2"])
    assert exit_.value.code == 2  # argparse's usage error, naming the variable, not a traceback
