"""decorate falls back on network errors, timeouts, 5xx, 429, 408 and broken answers; raises on other 4xx.

Every case runs against a real socket (the fault server, or a port nobody listens on), for the
sync and the async client alike.
"""

from __future__ import annotations

import pytest
from threadless import AsyncThreadless, Threadless, ThreadlessError, ThreadlessTimeoutError

from .faults import Close, Drip, DropMidBody, Hang, Respond, echo_decorate, error_body

USER = [{"role": "user", "content": "hello"}]

FALLBACKS = {
    "500": lambda r: Respond(500, error_body("internal", "Something went wrong on our side.")),
    "502 html": lambda r: Respond(502, b"<html>Bad gateway</html>", {"Content-Type": "text/html"}),
    "503": lambda r: Respond(503, error_body("unavailable", "Database down."), {"Retry-After": "3"}),
    "429 with retry-after": lambda r: Respond(
        429, error_body("rate_limited", "Too many requests."), {"Retry-After": "7"}
    ),
    "429 quota": lambda r: Respond(
        429, error_body("quota_exceeded", "The monthly decorate allowance is used up.")
    ),
    "408": lambda r: Respond(408, error_body("request_timeout", "Too slow.")),
    "200 invalid json": lambda r: Respond(200, b"{not json", {"Content-Type": "application/json"}),
    "200 not a decorated request": lambda r: Respond(200, {"hello": "world"}),
    "dropped mid-body": lambda r: DropMidBody(),
    "closed without answer": lambda r: Close(),
    "hangs past the timeout": lambda r: Hang(30),
}

RAISES = {
    "400": (
        400,
        "invalid_request",
        lambda r: Respond(
            400,
            error_body(
                "invalid_request", "messages[0].role: bad.", "Use user/assistant/tool/system.", "req_400"
            ),
        ),
    ),
    "401": (
        401,
        "unauthorized",
        lambda r: Respond(
            401, error_body("unauthorized", "Key revoked.", "Send an active project key.", "req_401")
        ),
    ),
    "404": (
        404,
        "not_found",
        lambda r: Respond(
            404,
            error_body(
                "not_found", "No memory mem_nope.", "Use an id that POST /v1/memories returned.", "req_404"
            ),
        ),
    ),
}


def _sync(url, errors, timeout=0.5):
    return Threadless(api_key="tl_proj_test", base_url=url, timeout=timeout, on_error=errors)


def _async(url, errors, timeout=0.5):
    return AsyncThreadless(api_key="tl_proj_test", base_url=url, timeout=timeout, on_error=errors)


# --- fallbacks ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", list(FALLBACKS))
def test_sync_decorate_falls_back_and_tells_on_error_once(fault, errors, case):
    fault.responder = FALLBACKS[case]
    with _sync(fault.url, errors) as memory:
        req = memory.decorate("mem_1", USER, instructions="Be brief.")
    assert req.degraded is True
    assert req.instructions == "Be brief."
    assert req.messages == USER
    assert len(errors.calls) == 1
    assert errors.contexts[0] == {"operation": "decorate", "memory_id": "mem_1"}
    assert isinstance(errors.errors[0], ThreadlessError)
    assert req.error is errors.errors[0]
    assert len(fault.paths()) == 1  # not retried


@pytest.mark.parametrize("case", list(FALLBACKS))
async def test_async_decorate_falls_back_and_tells_on_error_once(fault, errors, case):
    fault.responder = FALLBACKS[case]
    async with _async(fault.url, errors) as memory:
        req = await memory.decorate("mem_1", USER, instructions="Be brief.")
    assert req.degraded is True
    assert req.messages == USER
    assert errors.contexts == [{"operation": "decorate", "memory_id": "mem_1"}]


def test_refused_connection_falls_back(refused_url, errors):
    with _sync(refused_url, errors) as memory:
        req = memory.decorate("mem_r", USER, instructions="x")
    assert req.degraded and req.messages == USER
    assert errors.contexts == [{"operation": "decorate", "memory_id": "mem_r"}]
    assert errors.errors[0].status is None
    assert errors.errors[0].code == "connection_error"


async def test_async_refused_connection_falls_back(refused_url, errors):
    async with _async(refused_url, errors) as memory:
        req = await memory.decorate("mem_r", USER)
    assert req.degraded
    assert errors.contexts == [{"operation": "decorate", "memory_id": "mem_r"}]


def test_hanging_server_is_a_timeout_error(fault, errors):
    fault.responder = lambda r: Hang(30)
    with _sync(fault.url, errors, timeout=0.3) as memory:
        memory.decorate("mem_h", USER)
    assert isinstance(errors.errors[0], ThreadlessTimeoutError)
    assert errors.errors[0].code == "timeout"


@pytest.mark.parametrize("deadline_hook", [True, False], ids=["in-thread deadline", "io-thread deadline"])
def test_a_slow_dripping_answer_still_meets_the_total_deadline(fault, errors, deadline_hook):
    # Every read gets a byte well within httpx's per-read timeout: only a total deadline ends this.
    fault.responder = lambda r: Drip(0.05)
    with _sync(fault.url, errors, timeout=0.4) as memory:
        if not deadline_hook:
            memory._deadline = None  # the path used behind an environment proxy
        assert memory.decorate("mem_s", USER).degraded
    assert errors.errors[0].code == "timeout"


async def test_async_slow_dripping_answer_meets_the_total_deadline(fault, errors):
    fault.responder = lambda r: Drip(0.05)
    async with _async(fault.url, errors, timeout=0.4) as memory:
        assert (await memory.decorate("mem_s", USER)).degraded
    assert errors.errors[0].code == "timeout"


def test_io_thread_path_falls_back_and_raises_like_the_in_thread_one(fault, errors):
    with _sync(fault.url, errors, timeout=0.4) as memory:
        memory._deadline = None
        fault.responder = lambda r: Hang(30)
        assert memory.decorate("mem_1", USER).degraded
        fault.responder = RAISES["404"][2]
        with pytest.raises(ThreadlessError):
            memory.decorate("mem_1", USER)
    assert errors.contexts == [{"operation": "decorate", "memory_id": "mem_1"}]


def test_rate_limit_error_carries_retry_after_and_code(fault, errors):
    fault.responder = FALLBACKS["429 with retry-after"]
    with _sync(fault.url, errors) as memory:
        memory.decorate("mem_1", USER)
    error = errors.errors[0]
    assert (error.status, error.code, error.retry_after, error.retryable) == (429, "rate_limited", 7.0, True)
    assert error.request_id == "req_test"


def test_invalid_json_is_reported_as_an_invalid_response(fault, errors):
    fault.responder = FALLBACKS["200 invalid json"]
    with _sync(fault.url, errors) as memory:
        memory.decorate("mem_1", USER)
    assert (errors.errors[0].status, errors.errors[0].code) == (200, "invalid_response")


def test_an_exception_in_on_error_never_reaches_the_caller(refused_url):
    def broken(error, context):
        raise RuntimeError("the logger is broken")

    with Threadless(api_key="k", base_url=refused_url, timeout=0.5, on_error=broken) as memory:
        assert memory.decorate("mem_1", USER).degraded
        memory.report("mem_2", [{"role": "assistant", "content": "hi"}])
        assert memory.flush(5)


async def test_async_on_error_may_be_a_coroutine_and_may_raise(refused_url):
    seen = []

    async def handler(error, context):
        seen.append(context)
        raise RuntimeError("boom")

    async with AsyncThreadless(api_key="k", base_url=refused_url, timeout=0.5, on_error=handler) as memory:
        assert (await memory.decorate("mem_1", USER)).degraded
    assert seen == [{"operation": "decorate", "memory_id": "mem_1"}]


def test_without_on_error_fallbacks_are_logged(refused_url, caplog):
    with Threadless(api_key="k", base_url=refused_url, timeout=0.5) as memory:
        assert memory.decorate("mem_1", USER).degraded
    assert any("decorate on mem_1 failed" in r.getMessage() for r in caplog.records)


# --- raises --------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", list(RAISES))
def test_sync_decorate_raises_on_other_4xx_with_the_error_shape(fault, errors, case):
    status, code, responder = RAISES[case]
    fault.responder = responder
    with _sync(fault.url, errors) as memory, pytest.raises(ThreadlessError) as info:
        memory.decorate("mem_1", USER)
    error = info.value
    assert (error.status, error.code) == (status, code)
    assert error.message and error.hint
    assert error.request_id == f"req_{status}"
    assert error.retryable is False
    assert errors.calls == []  # a bug for the developer to see, not a fallback


@pytest.mark.parametrize("case", list(RAISES))
async def test_async_decorate_raises_on_other_4xx(fault, errors, case):
    status, code, responder = RAISES[case]
    fault.responder = responder
    async with _async(fault.url, errors) as memory:
        with pytest.raises(ThreadlessError) as info:
            await memory.decorate("mem_1", USER)
    assert (info.value.status, info.value.code) == (status, code)
    assert errors.calls == []


def test_a_4xx_without_the_error_shape_still_raises_a_clear_error(fault, errors):
    fault.responder = lambda r: Respond(404, b"<h1>Not Found</h1>", {"Content-Type": "text/html"})
    with _sync(fault.url, errors) as memory, pytest.raises(ThreadlessError) as info:
        memory.decorate("mem_1", USER)
    assert info.value.status == 404
    assert info.value.code == "not_found"
    assert "without Threadless's error shape" in info.value.message
    assert "Not Found" in info.value.message
    assert "base_url" in info.value.hint
    assert info.value.request_id == "req_test"


def test_other_calls_raise_on_any_failure(refused_url, errors):
    with _sync(refused_url, errors) as memory:
        with pytest.raises(ThreadlessError) as info:
            memory.get("mem_1")
    assert info.value.code == "connection_error"
    assert errors.calls == []


def test_a_missing_api_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("THREADLESS_API_KEY", raising=False)
    with pytest.raises(ThreadlessError, match="THREADLESS_API_KEY"):
        Threadless()


def test_key_and_base_url_come_from_the_environment(monkeypatch, fault):
    monkeypatch.setenv("THREADLESS_API_KEY", "tl_proj_env")
    monkeypatch.setenv("THREADLESS_BASE_URL", fault.url + "/")
    with Threadless() as memory:
        assert memory.base_url == fault.url + "/v1"
        memory.decorate("mem_1", USER)
    assert fault.requests[0].headers["authorization"] == "Bearer tl_proj_env"
    assert fault.requests[0].path == "/v1/memories/mem_1/decorate"


# --- report ------------------------------------------------------------------------------------

REPORT_FAILURES = {
    "refused": None,
    "500": lambda r: Respond(500, error_body("internal", "oops")),
    "429": lambda r: Respond(429, error_body("rate_limited", "slow down"), {"Retry-After": "1"}),
    "400": lambda r: Respond(400, error_body("invalid_request", "messages: bad")),
    "404": lambda r: Respond(404, error_body("not_found", "No memory.")),
    "hang": lambda r: Hang(30),
    "invalid json": lambda r: Respond(202, b"nope"),
    "dropped": lambda r: DropMidBody(),
}


@pytest.mark.parametrize("case", list(REPORT_FAILURES))
def test_report_never_raises_and_tells_on_error_once(fault, refused_url, errors, case):
    url = refused_url if REPORT_FAILURES[case] is None else fault.url
    if REPORT_FAILURES[case]:
        fault.responder = REPORT_FAILURES[case]
    with _sync(url, errors, timeout=0.3) as memory:
        assert memory.report("mem_9", [{"role": "assistant", "content": "hi"}]) is None
        assert memory.flush(5)
    assert errors.contexts == [{"operation": "report", "memory_id": "mem_9"}]
    if url == fault.url:
        assert len(fault.paths()) == 1  # not retried


@pytest.mark.parametrize("case", list(REPORT_FAILURES))
async def test_async_report_never_raises_and_tells_on_error_once(fault, refused_url, errors, case):
    url = refused_url if REPORT_FAILURES[case] is None else fault.url
    if REPORT_FAILURES[case]:
        fault.responder = REPORT_FAILURES[case]
    async with _async(url, errors, timeout=0.3) as memory:
        task = memory.report("mem_9", [{"role": "assistant", "content": "hi"}])
        await task  # awaiting the task never raises either
        assert await memory.flush(5)
    assert errors.contexts == [{"operation": "report", "memory_id": "mem_9"}]


def test_report_with_bad_arguments_goes_to_on_error_not_the_caller(fault, errors):
    with _sync(fault.url, errors) as memory:
        memory.report("", [{"role": "assistant", "content": "x"}])
        memory.report("mem_1", "not a list")
        memory.report("mem_1", [{"role": "assistant", "content": object()}])
    assert [c["operation"] for c in errors.contexts] == ["report"] * 3
    assert fault.requests == []


def test_idempotency_key_is_sent_on_decorate_and_report(fault, errors):
    fault.responder = lambda r: (
        echo_decorate(r) if r.path.endswith("/decorate") else Respond(202, {"accepted": 1})
    )
    with _sync(fault.url, errors) as memory:
        memory.decorate("mem_1", USER, idempotency_key="turn-1-d")
        memory.report("mem_1", [{"role": "assistant", "content": "hi"}], idempotency_key="turn-1-r")
        memory.flush(5)
    assert [r.headers.get("idempotency-key") for r in fault.requests] == ["turn-1-d", "turn-1-r"]
    assert errors.calls == []


def test_a_closed_client_raises_instead_of_falling_back(fault, errors):
    memory = _sync(fault.url, errors)
    memory.close()
    with pytest.raises(ThreadlessError) as info:
        memory.decorate("mem_1", USER)
    assert info.value.code == "client_closed"
    memory.report("mem_1", USER)  # still never raises: on_error hears about it
    assert errors.contexts == [{"operation": "report", "memory_id": "mem_1"}]


async def test_async_closed_client_raises_instead_of_falling_back(fault, errors):
    memory = _async(fault.url, errors)
    await memory.close()
    with pytest.raises(ThreadlessError):
        await memory.decorate("mem_1", USER)
    await memory.report("mem_1", USER)
    assert errors.contexts == [{"operation": "report", "memory_id": "mem_1"}]


def test_async_report_outside_an_event_loop_goes_to_on_error(fault, errors):
    memory = _async(fault.url, errors)
    assert memory.report("mem_1", USER) is None
    assert errors.contexts == [{"operation": "report", "memory_id": "mem_1"}]
