"""The load generator: a raw HTTP/1.1 keep-alive client on asyncio (no HTTP library, on uvloop, so
that the generator stays cheap beside the server it measures), and what it runs against a stack:
memories to work on, turns (decorate one user message, then report the reply), plain GETs, and
one client's decorate probe. It starts no server and summarises nothing beyond one phase."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import time
from typing import TYPE_CHECKING

from bench.common import conversation, quantile
from bench.load.config import HISTORY
from bench.load.cpu import db_cpu, machine_cpu, own_cpu, tree_cpu

if TYPE_CHECKING:
    from bench.load.stacks import Stack


def run(coro):
    """Run a coroutine on a fresh event loop: uvloop's, like the servers' (the load generator's own CPU per
    turn is about half asyncio's), unless BENCH_LOAD_LOOP=asyncio."""
    if os.environ.get("BENCH_LOAD_LOOP", "uvloop") == "uvloop":
        import uvloop

        return uvloop.run(coro)
    return asyncio.run(coro)


class Conn:
    def __init__(self, port: int, auth: str = "") -> None:
        self.port = port
        self.auth = f"Authorization: Bearer {auth}\r\n".encode() if auth else b""

    async def open(self) -> Conn:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self

    async def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + self.auth
        if body is not None:
            head += b"Content-Type: application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n"
        self.writer.write(head + b"\r\n" + (body or b""))
        raw = (await self.reader.readuntil(b"\r\n\r\n")).lower()
        status = int(raw[9:12])  # "HTTP/1.1 200 …"
        # Only the two headers that frame the body are looked for (cheaper than parsing them all).
        at = raw.find(b"\r\ncontent-length:")
        if at >= 0:
            data = await self.reader.readexactly(int(raw[at + 17 : raw.index(b"\r\n", at + 17)]))
        elif b"\r\ntransfer-encoding: chunked" in raw:
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).strip().split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                parts.append(chunk[:-2])
            data = b"".join(parts)
        else:
            data = b""
        return status, data

    def close(self) -> None:
        self.writer.close()


async def make_memories(
    stack: Stack, n: int, prefix: str = "", parallel: int = 1, key: str = ""
) -> list[str]:
    """`n` memories of HISTORY messages each on `stack`, made over `parallel` connections (in the
    project of `key`, when given)."""
    history = json.dumps({"messages": conversation(HISTORY)}).encode()

    async def some(numbers: range) -> list[str]:
        conn = await Conn(stack.port, key or stack.key).open()
        out = []
        for i in numbers:
            if stack.product:
                status, body = await conn.request(
                    "POST", "/v1/memories", json.dumps({"external_id": f"u{prefix}{i}"}).encode()
                )
                memory = json.loads(body)["id"]
                status, _ = await conn.request("POST", f"/v1/memories/{memory}/report", history)
            else:
                memory = f"m{prefix}{i}"
                status, _ = await conn.request("POST", f"/load/{memory}", history)
            assert status in (200, 201, 202), status
            out.append(memory)
        conn.close()
        return out

    parts = await asyncio.gather(*(some(range(k, n, parallel)) for k in range(parallel)))
    ordered = [""] * n
    for k, part in enumerate(parts):
        ordered[k::parallel] = part
    return ordered


async def turns(
    stack: Stack, memories: list[str], clients: int, seconds: float, budget: int = 0, key: str = ""
) -> dict:
    """`clients` connections doing turns (decorate + report) for `seconds` (decorate at `budget`
    tokens when given; with another project's `key`)."""
    conns = [await Conn(stack.port, key or stack.key).open() for _ in range(clients)]
    extra = {"budget_tokens": budget} if budget else {}
    latencies: list[float] = []
    decorates: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds

    async def one(conn: Conn, memory: str, c: int) -> None:
        nonlocal errors
        i = 0
        while time.perf_counter() < deadline:
            i += 1
            user = json.dumps(
                {"messages": [{"role": "user", "content": f"client {c} question {i}: what next?"}], **extra}
            )
            reply = json.dumps(
                {"messages": [{"role": "assistant", "content": f"answer {i} for client {c}."}]}
            )
            start = time.perf_counter()
            status, _ = await conn.request("POST", stack.decorate_path(memory), user.encode())
            mid = time.perf_counter()
            status2, _ = await conn.request("POST", stack.report_path(memory), reply.encode())
            end = time.perf_counter()
            if status != 200 or status2 not in (200, 202):
                errors += 1
            latencies.append(end - start)
            decorates.append(mid - start)

    db = db_cpu(stack.database) if stack.pg else {}
    busy, total = machine_cpu()
    gen = own_cpu()
    started, cpu = time.perf_counter(), tree_cpu(stack.proc.pid)
    await asyncio.gather(*(one(conn, memories[i], i) for i, conn in enumerate(conns)))
    elapsed, cpu = time.perf_counter() - started, tree_cpu(stack.proc.pid) - cpu
    gen = own_cpu() - gen
    busy_after, total_after = machine_cpu()
    db_after = db_cpu(stack.database) if stack.pg else {}
    for conn in conns:
        conn.close()
    ms = [x * 1000 for x in latencies]
    n = max(1, len(latencies))
    machine = max(total_after - total, 1e-9)  # CPU seconds the machine had over the phase, all cores
    out = {
        "clients": clients,
        "turns": len(latencies),
        "seconds": elapsed,
        "turns_s": len(latencies) / elapsed,
        "cpu_ms": cpu * 1000 / n,
        "gen_cpu_ms": gen * 1000 / n,
        "p50": quantile(ms, 0.5),
        "p99": quantile(ms, 0.99),
        "errors": errors,
        "decorate_p50": quantile([x * 1000 for x in decorates], 0.5),
        # shares of the whole machine over the phase: the server's, the load generator's, all of it
        "server_share": cpu / machine,
        "gen_share": gen / machine,
        "busy_share": (busy_after - busy) / machine,
    }
    for side, key in (("postgres", "pg_cpu_ms"), ("redis", "redis_cpu_ms")):  # the database side's, per turn
        if db:
            out[key] = (db_after[side] - db[side]) * 1000 / n
    if db:
        out["pg_share"] = (db_after["postgres"] - db["postgres"]) / machine
    return out


async def requests(stack: Stack, path_for, clients: int, seconds: float, memories: list[str]) -> dict:
    conns = [await Conn(stack.port, stack.key).open() for _ in range(clients)]
    count = errors = 0
    lat: list[float] = []
    deadline = time.perf_counter() + seconds

    async def one(conn: Conn, memory: str) -> None:
        nonlocal count, errors
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            status, _ = await conn.request("GET", path_for(memory))
            lat.append(time.perf_counter() - start)
            count += 1
            errors += status != 200

    started = time.perf_counter()
    await asyncio.gather(*(one(conn, memories[i % len(memories)]) for i, conn in enumerate(conns)))
    elapsed = time.perf_counter() - started
    for conn in conns:
        conn.close()
    return {"rps": count / elapsed, "p50": quantile([x * 1000 for x in lat], 0.5), "errors": errors}


PROBE_CALLS = (
    60  # single-client decorates on a fresh memory, the first 10 not counted (bench.load.inproc too)
)


async def decorate_probe(stack: Stack, memory: str) -> float:
    """One client's decorate p50 over HTTP on a memory of HISTORY messages, call for call what
    bench.load.inproc times in process on another such memory: the HTTP cost, nothing else."""
    conn = await Conn(stack.port, stack.key).open()
    times = []
    for i in range(PROBE_CALLS):
        body = json.dumps({"messages": [{"role": "user", "content": f"in process {i}?"}]}).encode()
        start = time.perf_counter()
        status, _ = await conn.request("POST", stack.decorate_path(memory), body)
        assert status == 200, status
        if i >= 10:
            times.append((time.perf_counter() - start) * 1000)
        reply = json.dumps({"messages": [{"role": "assistant", "content": f"answer {i}."}]}).encode()
        status, _ = await conn.request("POST", stack.report_path(memory), reply)  # as in process: not timed
        assert status in (200, 202), status
    conn.close()
    return quantile(times, 0.5)
