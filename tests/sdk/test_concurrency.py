"""Many threads and asyncio tasks decorating and reporting on shared and separate memories."""

from __future__ import annotations

import asyncio
import random
import threading

import pytest
from threadless import AsyncThreadless, Threadless

from .faults import Respond, echo_decorate, error_body


def user(text):
    return {"role": "user", "content": text}


def assistant(text):
    return {"role": "assistant", "content": text}


@pytest.mark.live
def test_threads_on_shared_and_separate_memories_against_a_live_server(live_server_proc, errors):
    with Threadless(
        api_key=live_server_proc.key, base_url=live_server_proc.url, timeout=30, on_error=errors
    ) as memory:
        shared = memory.create().id
        separate = [memory.create().id for _ in range(6)]
        failures: list[BaseException] = []

        def agent(memory_id: str, name: str, turns: int) -> None:
            try:
                for i in range(turns):
                    req = memory.decorate(memory_id, [user(f"{name} {i}")])
                    assert req.messages[-1] == user(f"{name} {i}")
                    memory.report(memory_id, [assistant(f"reply to {name} {i}")])
            except BaseException as exc:  # collected for the main thread to see
                failures.append(exc)

        threads = [
            threading.Thread(target=agent, args=(mid, f"solo{n}", 4)) for n, mid in enumerate(separate)
        ]
        threads += [threading.Thread(target=agent, args=(shared, f"team{n}", 3)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert memory.flush(60)
        assert failures == []
        assert errors.calls == []
        for n, mid in enumerate(separate):
            contents = [e.content for e in memory.entries.list(mid)]
            # One agent per memory: its turns are stored in order, each reply after its question.
            assert contents == [x for i in range(4) for x in (f"solo{n} {i}", f"reply to solo{n} {i}")]
        shared_entries = list(memory.entries.list(shared, limit=1000))
        assert sorted(e.content for e in shared_entries if e.role == "user") == sorted(
            f"team{n} {i}" for n in range(4) for i in range(3)
        )
        assert len([e for e in shared_entries if e.role == "assistant"]) == 12


@pytest.mark.live
async def test_tasks_on_shared_and_separate_memories_against_a_live_server(live_server_proc, errors):
    async with AsyncThreadless(
        api_key=live_server_proc.key, base_url=live_server_proc.url, timeout=30, on_error=errors
    ) as memory:
        shared = (await memory.create()).id
        separate = [(await memory.create()).id for _ in range(6)]

        async def agent(memory_id: str, name: str, turns: int) -> None:
            for i in range(turns):
                req = await memory.decorate(memory_id, [user(f"{name} {i}")])
                assert req.messages[-1] == user(f"{name} {i}")
                memory.report(memory_id, [assistant(f"reply to {name} {i}")])

        await asyncio.gather(
            *[agent(mid, f"solo{n}", 4) for n, mid in enumerate(separate)],
            *[agent(shared, f"team{n}", 3) for n in range(4)],
        )
        assert await memory.flush(60)
        assert errors.calls == []
        for n, mid in enumerate(separate):
            contents = [e.content for e in await memory.entries.list(mid)]
            assert contents == [x for i in range(4) for x in (f"solo{n} {i}", f"reply to solo{n} {i}")]
        shared_entries = list(await memory.entries.list(shared, limit=1000))
        assert len([e for e in shared_entries if e.role == "user"]) == 12
        assert len([e for e in shared_entries if e.role == "assistant"]) == 12


def flapping(seed: int):
    rng = random.Random(seed)
    lock = threading.Lock()

    def responder(request):
        with lock:
            roll = rng.random()
        if roll < 0.3:
            return Respond(503, error_body("unavailable", "flap"))
        if request.path.endswith("/report"):
            return Respond(202, {"accepted": 1, "turn": 1})
        return echo_decorate(request, "CTX")

    return responder


def test_threads_against_a_flapping_server_never_see_an_exception(fault, errors):
    fault.responder = flapping(1)
    failures: list[BaseException] = []
    calls = {"decorate": 0}
    count_lock = threading.Lock()

    with Threadless(api_key="k", base_url=fault.url, timeout=5, max_tails=5, on_error=errors) as memory:

        def agent(n: int) -> None:
            try:
                for i in range(15):
                    memory_id = f"mem_{(n + i) % 8}"
                    req = memory.decorate(memory_id, [user(f"{n}-{i}")], instructions="Rules")
                    with count_lock:
                        calls["decorate"] += 1
                    assert req.messages[-1] == user(f"{n}-{i}")
                    assert req.instructions.startswith("Rules")
                    memory.report(memory_id, [assistant(f"r{n}-{i}")])
            except BaseException as exc:
                failures.append(exc)

        threads = [threading.Thread(target=agent, args=(n,)) for n in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert memory.flush(30)
    assert failures == []
    degraded = sum(1 for r in fault.requests if r.path.endswith("/decorate")) - calls["decorate"]
    assert degraded == 0  # one request per decorate: nothing retried
    assert all(
        c["operation"] in {"decorate", "report"} and c["memory_id"].startswith("mem_")
        for c in errors.contexts
    )
    assert any(c["operation"] == "decorate" for c in errors.contexts)


async def test_tasks_against_a_flapping_server_never_see_an_exception(fault, errors):
    fault.responder = flapping(2)
    async with AsyncThreadless(
        api_key="k", base_url=fault.url, timeout=5, max_tails=5, on_error=errors
    ) as memory:

        async def agent(n: int) -> None:
            for i in range(8):
                memory_id = f"mem_{(n + i) % 8}"
                req = await memory.decorate(memory_id, [user(f"{n}-{i}")], instructions="Rules")
                assert req.messages[-1] == user(f"{n}-{i}")
                memory.report(memory_id, [assistant(f"r{n}-{i}")])

        await asyncio.gather(*[agent(n) for n in range(16)])
        assert await memory.flush(30)
    assert any(c["operation"] == "decorate" for c in errors.contexts)
