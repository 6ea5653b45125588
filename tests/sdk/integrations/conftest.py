"""Fixtures for the framework adapters: a live server, and one that can be stopped mid-test."""

from __future__ import annotations

import contextlib

import pytest

from harness.servers import ThreadlessServer
from tests.sdk.conftest import ErrorLog

pytestmark = pytest.mark.live


class StoppableServer(ThreadlessServer):
    """A live server whose web process a test stops (the service is down) and starts again."""

    @contextlib.contextmanager
    def down(self):
        self.stop_web()
        try:
            yield
        finally:
            self.start_web()


@pytest.fixture(scope="session")
def stoppable_server():
    server = StoppableServer().start()
    yield server
    server.stop()


@pytest.fixture
def errors() -> ErrorLog:
    return ErrorLog()
