"""A total deadline for a synchronous httpx call, enforced in the caller's own thread.

httpx's timeouts are per phase and per socket read, so a server that drips a byte a second
could keep a call going for ever. This wraps httpcore's network backend so that every connect,
read and write gets at most the time left before the call's deadline (kept per thread), and
raises httpcore's timeout error once it has passed. No extra thread, no hop, no polling.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import httpcore

__all__ = ["DeadlineBackend", "install"]


class _Deadline(threading.local):
    at: float | None = None


def _bound(deadline: _Deadline, timeout: float | None, error: type[Exception]) -> float | None:
    """The smaller of httpx's per-operation timeout and the time left before the deadline."""
    at = deadline.at
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise error("the call's total deadline has passed")
    return left if timeout is None or left < timeout else timeout


class DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream, deadline: _Deadline) -> None:
        self._stream = stream
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _bound(self._deadline, timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        return self._stream.write(buffer, _bound(self._deadline, timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        stream = self._stream.start_tls(
            ssl_context, server_hostname, _bound(self._deadline, timeout, httpcore.ConnectTimeout)
        )
        return DeadlineStream(stream, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self._backend = backend
        self.deadline = _Deadline()

    def _bound(self, timeout: float | None) -> float | None:
        return _bound(self.deadline, timeout, httpcore.ConnectTimeout)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        stream = self._backend.connect_tcp(host, port, self._bound(timeout), local_address, socket_options)
        return DeadlineStream(stream, self.deadline)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:
        return DeadlineStream(
            self._backend.connect_unix_socket(path, self._bound(timeout), socket_options), self.deadline
        )

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def install(transport: Any) -> _Deadline | None:
    """Wrap the network backend of an ``httpx.HTTPTransport``'s pool; None if its shape is unknown
    (then the client falls back to running each call on an I/O thread)."""
    pool = getattr(transport, "_pool", None)
    if type(pool) is not httpcore.ConnectionPool or not isinstance(
        getattr(pool, "_network_backend", None), httpcore.NetworkBackend
    ):
        return None
    backend = DeadlineBackend(pool._network_backend)
    pool._network_backend = backend
    return backend.deadline
