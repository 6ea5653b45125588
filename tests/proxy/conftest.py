from __future__ import annotations

import time

import pytest

from harness.proxy_stubs import ProviderStub
from harness.servers import ThreadlessServer


@pytest.fixture(scope="package")
def upstream():
    stub = ProviderStub()
    yield stub
    stub.close()


@pytest.fixture(autouse=True)
def _fresh_upstream(request):
    if "upstream" in request.fixturenames:
        request.getfixturevalue("upstream").reset()


@pytest.fixture(autouse=True)
def _loopback_egress(settings):
    # The stub listens on loopback, which the egress policy refuses unless allowed.
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1"]


@pytest.fixture(scope="package")
def live():
    """A real uvicorn Threadless server and Celery worker that may reach the loopback stub."""
    server = ThreadlessServer(worker=True, env={"THREADLESS_EGRESS_ALLOW": "127.0.0.1"}).start()
    yield server
    server.stop()


def entries(live, memory_id: str) -> list[dict]:
    with live.client() as http:
        answer = http.get(
            f"/memories/{memory_id}/entries", params={"include_uncommitted": "true", "limit": 100}
        )
        assert answer.status_code == 200, answer.text
        return answer.json()["data"]


def wait_for(check, timeout: float = 45.0):
    """Poll until `check()` returns something truthy (background work, a disconnect noticed)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)
