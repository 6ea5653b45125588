"""Connections spread evenly over the web server's worker processes (`threadless-serve`).

Several uvicorn processes sharing one listening socket do not share its connections evenly: the
process whose event loop wakes first accepts the whole burst waiting in the backlog, so 16
keep-alive connections opened together (an SDK's pool, a load balancer's upstream pool) land
16 / 0 on two processes about as often as 8 / 8. One process then
saturates its core while the other idles, and the service runs at half the machine.

Here the parent process owns the listening socket and hands each accepted connection to the
worker holding the fewest open connections (Node's cluster module does the same, for the same
reason):

* parent: `accept()` → `send_fds` over a Unix socket pair to the chosen worker; each worker writes
  one byte back when a connection closes, so the parent keeps every worker's count. A worker that
  dies is started again; SIGTERM / SIGINT stop accepting, pass SIGTERM on and wait for the workers
  to finish their requests (uvicorn's graceful shutdown, unchanged).
* worker: an ordinary `uvicorn.Server` (lifespan, protocols, graceful shutdown) whose only listener
  is that socket pair: every connection handed to it goes to `loop.connect_accepted_socket` with
  uvicorn's own HTTP protocol.

The hand-off costs the parent one `accept` and one `sendmsg` per connection, not per request: a
keep-alive connection never goes through the parent again. Needs `socket.send_fds` (POSIX);
elsewhere, or with THREADLESS_WEB_BALANCE=0, `threadless-serve` uses uvicorn's own supervisor.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import multiprocessing
import os
import selectors
import signal
import socket
import sys
import time
from dataclasses import dataclass

import uvicorn

log = logging.getLogger("uvicorn.error")

CLOSED = b"c"  # worker → parent: one of my connections closed
HANDED = b"h"  # parent → worker: here is a connection (its fd rides along)
RESTART_BACKOFF = (0.5, 1.0, 2.0, 5.0)  # seconds before restarting a worker that died, by repeat count

supported = hasattr(socket, "send_fds") and hasattr(socket, "AF_UNIX")


# --- the worker -------------------------------------------------------------------------------


class HandedServer(uvicorn.Server):
    """A uvicorn server whose connections arrive over `channel` instead of a listening socket."""

    def __init__(self, config: uvicorn.Config, channel: socket.socket) -> None:
        super().__init__(config)
        self.channel = channel

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=[])  # lifespan and state, no listener of its own
        if self.should_exit:
            return
        protocol_class = _counted(self.config.http_protocol_class, self.channel)

        def create_protocol(_loop: asyncio.AbstractEventLoop | None = None) -> asyncio.Protocol:
            return protocol_class(config=self.config, server_state=self.server_state,
                                  app_state=self.lifespan.state, _loop=_loop)

        self._create_protocol = create_protocol
        self.channel.setblocking(False)
        asyncio.get_running_loop().add_reader(self.channel.fileno(), self._take)

    def _take(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                data, fds, _flags, _addr = socket.recv_fds(self.channel, 64, 64)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data, fds = b"", []
            if not data and not fds:  # the parent is gone: finish what is running and stop
                loop.remove_reader(self.channel.fileno())
                self.should_exit = True
                return
            for fd in fds:
                sock = socket.socket(fileno=fd)
                sock.setblocking(False)
                task = loop.create_task(loop.connect_accepted_socket(self._create_protocol, sock))
                task.add_done_callback(_closed_on_failure(sock, self.channel))

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            asyncio.get_running_loop().remove_reader(self.channel.fileno())
        except (ValueError, OSError):
            pass
        await super().shutdown(sockets=sockets)


def _closed_on_failure(sock: socket.socket, channel: socket.socket):
    """A connection that never got its protocol is closed, and counted back (no connection_lost will)."""
    def done(task: asyncio.Task) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.warning("a handed connection could not be started: %s", task.exception())
            sock.close()
            try:
                channel.send(CLOSED)
            except OSError:
                pass
    return done


def _counted(protocol_class: type, channel: socket.socket) -> type:
    """uvicorn's protocol class, telling the parent when a connection closes."""

    class Counted(protocol_class):  # type: ignore[misc, valid-type]
        def connection_lost(self, exc: Exception | None) -> None:
            try:
                channel.send(CLOSED)
            except OSError:  # parent gone, or its queue full: its count is off by one until it restarts us
                pass
            super().connection_lost(exc)

    Counted.__name__ = Counted.__qualname__ = f"Counted{protocol_class.__name__}"
    return Counted


def _worker_main(config: uvicorn.Config, channel: socket.socket) -> None:
    """A worker process's entry point (spawned: nothing of the parent's state is inherited)."""
    config.configure_logging()
    # Ctrl-C reaches the whole process group; uvicorn's handler takes it while serving, and once
    # stopped the worker exits quietly instead of raising KeyboardInterrupt again.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        HandedServer(config, channel).run()
    except KeyboardInterrupt:  # pragma: no cover - SIGINT is ignored above
        pass


# --- the parent -------------------------------------------------------------------------------


@dataclass
class Worker:
    index: int
    process: multiprocessing.process.BaseProcess | None = None
    channel: socket.socket | None = None
    connections: int = 0
    restarts: int = 0
    started_at: float = 0.0
    exited_at: float | None = None  # when _reap saw its process gone; None while it runs
    alive: bool = False  # its channel takes connections


class Balancer:
    """The parent process: accepts, hands each connection to the least busy worker, restarts the dead."""

    def __init__(self, config: uvicorn.Config, workers: int) -> None:
        self.config = config
        self.workers = [Worker(index=i) for i in range(max(1, workers))]
        self.listener: socket.socket | None = None
        self.selector = selectors.DefaultSelector()
        self.stopping = False
        self.context = multiprocessing.get_context("spawn")

    # lifecycle

    def run(self) -> int:
        self.listener = self.config.bind_socket()  # bound, not yet listening (uvicorn's workers call listen)
        self.listener.listen(self.config.backlog)
        self.listener.setblocking(False)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._on_stop_signal)
        for worker in self.workers:
            self._start(worker)
        self.selector.register(self.listener, selectors.EVENT_READ, None)
        log.info("balancing connections over %d worker processes [parent %d]", len(self.workers), os.getpid())
        try:
            while not self.stopping:
                ready = self.selector.select(timeout=0.5)
                # Closes first: a connection that ended before a new one arrived is not counted against its worker.
                for key, _ in ready:
                    if key.data is not None:
                        self._read_channel(key.data)
                if any(key.data is None for key, _ in ready):
                    self._accept()
                self._reap()
        finally:
            self._stop_workers()
        return 0

    def _on_stop_signal(self, signum, frame) -> None:
        self.stopping = True

    def _start(self, worker: Worker) -> None:
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        process = self.context.Process(target=_worker_main, args=(self.config, child_end),
                                       name=f"threadless-web-{worker.index}", daemon=False)
        process.start()
        child_end.close()
        parent_end.setblocking(False)
        worker.process, worker.channel, worker.connections = process, parent_end, 0
        worker.started_at, worker.exited_at, worker.alive = time.monotonic(), None, True
        self.selector.register(parent_end, selectors.EVENT_READ, worker)

    def _retire(self, worker: Worker) -> None:
        if worker.channel is not None:
            try:
                self.selector.unregister(worker.channel)
            except (KeyError, ValueError):
                pass
            worker.channel.close()
        worker.channel, worker.alive, worker.connections = None, False, 0

    def _reap(self) -> None:
        """Start again a worker whose process ended, after a pause that grows while it keeps dying."""
        now = time.monotonic()
        for worker in self.workers:
            process = worker.process
            if process is None or process.is_alive() or self.stopping:
                continue
            if worker.exited_at is None:
                log.error("worker %d (pid %s) exited with code %s; starting it again", worker.index,
                          process.pid, process.exitcode)
                self._retire(worker)
                worker.restarts = worker.restarts + 1 if now - worker.started_at < 30 else 1
                worker.exited_at = now
            pause = RESTART_BACKOFF[min(worker.restarts, len(RESTART_BACKOFF)) - 1]
            if now - worker.exited_at >= pause:
                process.join(0)
                self._start(worker)

    def _stop_workers(self) -> None:
        if self.listener is not None:
            try:
                self.selector.unregister(self.listener)
            except (KeyError, ValueError):
                pass
            self.listener.close()  # new connections are refused from now on
        running = [w.process for w in self.workers if w.process is not None and w.process.is_alive()]
        for process in running:
            os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + (self.config.timeout_graceful_shutdown or 30) + 5
        for process in running:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                log.error("worker pid %s did not stop in time; killing it", process.pid)
                process.kill()
                process.join(5)
        for worker in self.workers:
            self._retire(worker)
        self.selector.close()

    # connections

    def _accept(self) -> None:
        while True:
            try:
                conn, _addr = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # EMFILE and the like: log, back off briefly, keep serving
                if exc.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    log.error("accept failed: %s", exc)
                    time.sleep(0.05)
                    return
                if exc.errno in (errno.ECONNABORTED, errno.EPROTO):
                    continue
                raise
            with conn:
                if conn.family in (socket.AF_INET, socket.AF_INET6):
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._hand(conn)

    def _hand(self, conn: socket.socket) -> None:
        """To the live worker with the fewest open connections (ties: the lowest index); if its channel
        fails, the next one. With none alive the connection is closed: the client sees a reset."""
        for worker in sorted((w for w in self.workers if w.alive), key=lambda w: w.connections):
            try:
                socket.send_fds(worker.channel, [HANDED], [conn.fileno()])
            except (BlockingIOError, InterruptedError):
                continue  # that worker is not reading its channel: try another
            except OSError:
                self._retire(worker)
                continue
            worker.connections += 1
            return
        log.error("no worker could take a connection; closed it")

    def _read_channel(self, worker: Worker) -> None:
        while worker.channel is not None:
            try:
                data = worker.channel.recv(64)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data = b""
            if not data:  # the worker's end closed: it is exiting; _reap starts it again
                self._retire(worker)
                return
            worker.connections = max(0, worker.connections - data.count(CLOSED))


def run(config: uvicorn.Config, workers: int) -> None:
    sys.exit(Balancer(config, workers).run())
