"""Fixtures for the SDK tests: a fault-injection server, an on_error recorder, a refused port."""

from __future__ import annotations

import threading

import pytest

from harness.servers import free_port

from .faults import FaultServer


class ErrorLog:
    """An on_error callback that records (error, context) pairs."""

    def __init__(self) -> None:
        self.calls: list[tuple[BaseException, dict]] = []
        self._lock = threading.Lock()

    def __call__(self, error: BaseException, context: dict) -> None:
        with self._lock:
            self.calls.append((error, dict(context)))

    @property
    def contexts(self) -> list[dict]:
        return [c for _, c in self.calls]

    @property
    def errors(self) -> list[BaseException]:
        return [e for e, _ in self.calls]


@pytest.fixture
def fault():
    server = FaultServer().start()
    yield server
    server.stop()


@pytest.fixture
def errors() -> ErrorLog:
    return ErrorLog()


@pytest.fixture
def refused_url() -> str:
    return f"http://127.0.0.1:{free_port()}"
