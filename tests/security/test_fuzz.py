"""A bounded schemathesis run against a real server (`make test` and `make test-services`):
every /v1 operation, valid and invalid generated requests with a real project key, half of them
aimed at ids that exist. No 5xx, and every response matches the schema. `make reliability`
runs the same with many more examples (THREADLESS_FUZZ_EXAMPLES raises it here too).
"""

from __future__ import annotations

import os

import pytest

from harness.fuzz import fuzz
from harness.servers import ThreadlessServer

pytest.importorskip("schemathesis")
pytestmark = pytest.mark.services


@pytest.fixture(scope="module")
def fuzz_server():
    server = ThreadlessServer(env={"THREADLESS_RATE_LIMIT_PER_MINUTE": "0"}).start()
    yield server
    server.stop()


def test_no_operation_answers_5xx_or_off_schema(fuzz_server):
    examples = int(os.environ.get("THREADLESS_FUZZ_EXAMPLES", "3"))
    result = fuzz(fuzz_server.url, fuzz_server.key, max_examples=examples)
    assert result.operations >= 10
    assert result.requests >= result.operations
    assert not [s for s in result.statuses if s >= 500], result.statuses
    assert result.failures == [], "\n".join(result.failures)
