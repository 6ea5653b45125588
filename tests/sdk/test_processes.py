"""The promise in real processes: a later event loop, a forked child, racing decorates, a broken transport.

SPEC §8: "an AsyncThreadless used from a later event loop, a client inherited across os.fork(), a
client in a thread pool — decorate never raises for a transport problem and reports are not lost
silently."
"""

from __future__ import annotations

import asyncio
import json
import os
import threading

import httpx
import pytest
from threadless import AsyncThreadless, Threadless

from .faults import Respond, echo_decorate, error_body


def user(text):
    return {"role": "user", "content": text}


def assistant(text):
    return {"role": "assistant", "content": text}


class Recorder:
    """Answers like Threadless (decorate echoes, report 202) and can hold reports or go down."""

    def __init__(self) -> None:
        self.up = True
        self.hold_reports = threading.Event()
        self.hold_reports.set()  # set = reports are answered at once
        self.hold_decorate_of: dict[str, threading.Event] = {}  # user text -> released when set

    def __call__(self, request):
        if not self.up:
            return Respond(503, error_body("unavailable", "Down."))
        if request.path.endswith("/report"):
            self.hold_reports.wait(30)
            return Respond(202, {"accepted": len(request.body["messages"]), "turn": 1})
        text = request.body["messages"][-1]["content"]
        gate = self.hold_decorate_of.get(text)
        if gate is not None:
            gate.wait(30)
        return echo_decorate(request)


def reported(fault) -> list[str]:
    with fault.lock:
        return [
            m["content"] for r in fault.requests if r.path.endswith("/report") for m in r.body["messages"]
        ]


# --- AsyncThreadless across asyncio.run() calls ----------------------------------------------


def test_an_async_client_keeps_working_in_a_second_asyncio_run(fault, errors):
    fault.responder = Recorder()
    memory = AsyncThreadless(api_key="tl_proj_test", base_url=fault.url, timeout=2, on_error=errors)

    async def turn(text: str):
        req = await memory.decorate("mem_1", [user(text)])
        memory.report("mem_1", [assistant("re " + text)])
        assert await memory.flush(5)
        return req

    first = asyncio.run(turn("one"))
    second = asyncio.run(turn("two"))  # a new loop: the first loop's pooled connection is unusable
    third = asyncio.run(turn("three"))
    assert [r.degraded for r in (first, second, third)] == [False, False, False]
    assert errors.calls == []
    assert reported(fault) == ["re one", "re two", "re three"]
    asyncio.run(memory.close())


def test_a_report_cut_off_by_the_end_of_its_loop_is_told_and_does_not_break_the_next_loop(fault, errors):
    recorder = fault.responder = Recorder()
    memory = AsyncThreadless(api_key="tl_proj_test", base_url=fault.url, timeout=2, on_error=errors)

    async def leave_a_report_behind():
        await memory.decorate("mem_1", [user("one")])
        recorder.hold_reports.clear()
        memory.report("mem_1", [assistant("never flushed")])
        await asyncio.sleep(0.05)  # the report is in flight when asyncio.run() ends and cancels it

    async def next_turn():
        recorder.hold_reports.set()
        req = await memory.decorate("mem_1", [user("two")])
        memory.report("mem_1", [assistant("re two")])
        return req, await memory.flush(5)

    asyncio.run(leave_a_report_behind())
    # Not lost silently: asyncio.run() cancelled it, and on_error heard so.
    assert [(e.code, c) for e, c in errors.calls] == [
        ("report_cancelled", {"operation": "report", "memory_id": "mem_1"})
    ]
    req, flushed = asyncio.run(next_turn())
    assert not req.degraded
    assert flushed is True
    assert "re two" in reported(fault)
    assert len(errors.calls) == 1


class BrokenTransport(httpx.AsyncBaseTransport, httpx.BaseTransport):
    """A transport with a bug: it raises something no one planned for."""

    def handle_request(self, request):
        raise RuntimeError("Event loop is closed")

    async def handle_async_request(self, request):
        raise RuntimeError("Event loop is closed")


def test_an_unexpected_error_inside_sync_decorate_falls_back_like_a_network_error(fault, errors):
    with Threadless(api_key="tl_proj_test", base_url=fault.url, timeout=2, on_error=errors) as memory:
        memory._http = httpx.Client(base_url=memory.base_url, transport=BrokenTransport())
        req = memory.decorate("mem_1", [user("hi")], instructions="Be kind.")
    assert req.degraded and req.messages == [user("hi")] and req.instructions == "Be kind."
    assert [(e.code, e.retryable) for e in errors.errors] == [("client_error", True)]
    assert isinstance(errors.errors[0].__cause__, RuntimeError)


async def test_an_unexpected_error_inside_async_decorate_falls_back_like_a_network_error(fault, errors):
    async with AsyncThreadless(
        api_key="tl_proj_test", base_url=fault.url, timeout=2, on_error=errors
    ) as memory:
        memory._client()
        memory._http = httpx.AsyncClient(base_url=memory.base_url, transport=BrokenTransport())
        req = await memory.decorate("mem_1", [user("hi")])
    assert req.degraded and req.messages == [user("hi")]
    assert [e.code for e in errors.errors] == ["client_error"]


# --- os.fork() -------------------------------------------------------------------------------


def _in_child(work) -> dict:
    """Run ``work()`` in a real forked child; answer the JSON it returns (or its error)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 0
        try:
            os.close(read)
            try:
                result = work()
            except BaseException as exc:
                result, code = {"error": f"{type(exc).__name__}: {exc}"}, 1
            os.write(write, json.dumps(result).encode())
        finally:
            os._exit(code)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    return json.loads(b"".join(chunks) or b'{"error": "no answer from the child"}')


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_sends_its_own_reports_while_the_parent_still_has_one_in_flight(fault, errors):
    recorder = fault.responder = Recorder()
    memory = Threadless(api_key="tl_proj_test", base_url=fault.url, timeout=5, on_error=errors)
    memory.decorate("mem_1", [user("parent turn")])
    recorder.hold_reports.clear()
    memory.report("mem_1", [assistant("parent reply")])  # held by the server while we fork

    def child():
        req = memory.decorate("mem_1", [user("child turn")])
        memory.report("mem_1", [assistant("child reply")])
        return {"degraded": req.degraded, "flushed": memory.flush(10)}

    # The parent's report is answered only once the child has flushed its own.
    releaser = threading.Thread(
        target=lambda: (_wait_for(lambda: "child reply" in reported(fault)), recorder.hold_reports.set()),
        daemon=True,
    )
    releaser.start()
    result = _in_child(child)
    releaser.join(15)
    assert result == {"degraded": False, "flushed": True}
    assert memory.flush(10)
    assert sorted(reported(fault)) == ["child reply", "parent reply"]  # each sent once, by its own process
    assert errors.calls == []
    memory.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_keeps_the_parents_tail_for_fallbacks(fault, errors):
    recorder = fault.responder = Recorder()
    memory = Threadless(api_key="tl_proj_test", base_url=fault.url, timeout=2, on_error=errors)
    memory.decorate("mem_1", [user("seen by the parent")], instructions="Be kind.")
    recorder.up = False

    def child():
        req = memory.decorate("mem_1", [user("child turn")])
        return {"degraded": req.degraded, "messages": [m["content"] for m in req.messages]}

    assert _in_child(child) == {"degraded": True, "messages": ["seen by the parent", "child turn"]}
    memory.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_an_async_client_works_in_a_forked_child(fault, errors):
    fault.responder = Recorder()
    memory = AsyncThreadless(api_key="tl_proj_test", base_url=fault.url, timeout=2, on_error=errors)
    asyncio.run(memory.decorate("mem_1", [user("parent")]))

    def child():
        async def turn():
            req = await memory.decorate("mem_1", [user("child")])
            memory.report("mem_1", [assistant("child reply")])
            return {"degraded": req.degraded, "flushed": await memory.flush(5)}

        return asyncio.run(turn())

    assert _in_child(child) == {"degraded": False, "flushed": True}
    assert reported(fault) == ["child reply"]


def _wait_for(condition, limit: float = 15.0) -> None:
    done = threading.Event()
    for _ in range(int(limit / 0.02)):
        if condition():
            return
        done.wait(0.02)


# --- the newest decorate's answer wins the tail --------------------------------------------------


def test_a_slow_older_decorate_answer_never_replaces_a_newer_tail(fault, errors):
    recorder = fault.responder = Recorder()
    gate = recorder.hold_decorate_of["old"] = threading.Event()
    with Threadless(api_key="tl_proj_test", base_url=fault.url, timeout=5, on_error=errors) as memory:
        slow = threading.Thread(target=memory.decorate, args=("mem_1", [user("old")]))
        slow.start()
        _wait_for(lambda: len(fault.paths("POST")) == 1)  # the older one has started
        assert not memory.decorate("mem_1", [user("new")]).degraded
        gate.set()
        slow.join(10)
        recorder.up = False
        fallback = memory.decorate("mem_1", [user("third")])
    assert fallback.degraded
    assert [m["content"] for m in fallback.messages] == ["new", "third"]


async def test_a_slow_older_async_decorate_answer_never_replaces_a_newer_tail(fault, errors):
    recorder = fault.responder = Recorder()
    gate = recorder.hold_decorate_of["old"] = threading.Event()
    async with AsyncThreadless(
        api_key="tl_proj_test", base_url=fault.url, timeout=5, on_error=errors
    ) as memory:
        slow = asyncio.ensure_future(memory.decorate("mem_1", [user("old")]))
        while len(fault.paths("POST")) < 1:
            await asyncio.sleep(0.02)
        assert not (await memory.decorate("mem_1", [user("new")])).degraded
        gate.set()
        assert not (await slow).degraded  # the caller still gets its own answer
        recorder.up = False
        fallback = await memory.decorate("mem_1", [user("third")])
    assert [m["content"] for m in fallback.messages] == ["new", "third"]


def test_an_older_success_does_not_end_the_degraded_state_of_a_newer_fallback(fault, errors):
    recorder = fault.responder = Recorder()
    gate = recorder.hold_decorate_of["old"] = threading.Event()
    with Threadless(api_key="tl_proj_test", base_url=fault.url, timeout=5, on_error=errors) as memory:
        slow = threading.Thread(target=memory.decorate, args=("mem_1", [user("old")]))
        slow.start()
        _wait_for(lambda: len(fault.paths("POST")) == 1)
        recorder.up = False
        assert memory.decorate("mem_1", [user("during the outage")]).degraded
        recorder.up = True
        gate.set()
        slow.join(10)
        memory.report("mem_1", [assistant("reply to the outage turn")])
        assert memory.flush(5)
    assert reported(fault) == []  # its user message was never stored: the report is skipped
