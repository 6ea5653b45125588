"""The load floor: a bare ASGI app doing the decorate lower bound's SQL, no framework.

`POST /decorate/<memory>`: insert + commit the user message, then read the newest rows of the
memory with a running token sum until the budget and `json.dumps` the window (bench.lowerbound's
SQL); `POST /report/<memory>`: insert + commit the reply; `GET /healthz`; `GET /memory/<memory>`:
one indexed count. Plain drivers (stdlib sqlite3, psycopg), one connection per thread, the sync
calls on a thread pool of the product's size, run by the same server and process model
(`granian --interface asgi --workers N bench.floor:app`). FLOOR_DB is a SQLite path or a postgres:// URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from bench.lowerbound import COLUMNS, _cut, _row_message
from common.writelock import writer_lock

DB = os.environ.get("FLOOR_DB", "")
PG = DB.startswith("postgres")
BUDGET = 60_000
# A control, off by default: FLOOR_WRITER_LOCK=1 lines the SQLite writers up on the product's flock
# (common.writelock) instead of SQLite's busy handler (docs/tuning/serving.md).
WRITER_LOCK = writer_lock(DB) if not PG and os.environ.get("FLOOR_WRITER_LOCK") == "1" else None
_local = threading.local()
_pool = ThreadPoolExecutor(max_workers=int(os.environ.get("THREADLESS_WEB_THREADS", "8")))
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS floor_msg (memory TEXT NOT NULL, seq BIGINT NOT NULL, role TEXT NOT NULL, "
    "content TEXT NOT NULL, tool_calls TEXT, tool_call_id TEXT NOT NULL, tokens INTEGER NOT NULL)"
)
INDEX = "CREATE INDEX IF NOT EXISTS floor_msg_memory_seq ON floor_msg (memory, seq)"


def connect():
    if PG:
        import psycopg

        return psycopg.connect(DB, autocommit=True)
    conn = sqlite3.connect(DB, isolation_level=None, timeout=20, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def _conn():
    conn = getattr(_local, "conn", None)
    if conn is None:
        conn = _local.conn = connect()
    return conn


def _q(sql: str) -> str:
    return sql.replace("?", "%s") if PG else sql


def _row(memory: str, message: dict, seq: int) -> tuple:
    tokens = (len(message.get("content") or "") + 3) // 4 + 4
    return (memory, seq, message["role"], message.get("content") or "", None, "", tokens)


def _insert(memory: str, message: dict) -> None:
    conn = _conn()
    row = _row(memory, message, time.time_ns())
    sql = _q("INSERT INTO floor_msg VALUES (?, ?, ?, ?, ?, ?, ?)")
    if PG:
        with conn.transaction():
            conn.execute(sql, row)
    else:
        with WRITER_LOCK or contextlib.nullcontext():
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(sql, row)
            conn.execute("COMMIT")


def _rows(memory: str):
    conn = _conn()
    if not PG:
        yield from conn.execute(
            f"SELECT {COLUMNS} FROM floor_msg WHERE memory = ? ORDER BY seq DESC", (memory,)
        )
        return
    before = 2**62
    for limit in (1024, *([4096] * 1000)):
        rows = conn.execute(
            f"SELECT {COLUMNS}, seq FROM floor_msg WHERE memory = %s AND seq < %s ORDER BY seq DESC LIMIT %s",
            (memory, before, limit),
        ).fetchall()
        yield from rows
        if len(rows) < limit:
            return
        before = rows[-1][5]


def decorate(memory: str, body: bytes) -> bytes:
    new = json.loads(body)["messages"]
    for message in new:
        _insert(memory, message)
    rows = _cut(_rows(memory), 0, BUDGET)
    return json.dumps({"messages": [_row_message(r[0], r[1], r[2], r[3]) for r in rows]}).encode()


def report(memory: str, body: bytes) -> bytes:
    messages = json.loads(body)["messages"]
    for message in messages:
        _insert(memory, message)
    return json.dumps({"accepted": len(messages)}).encode()


def memory_get(memory: str) -> bytes:
    row = _conn().execute(_q("SELECT count(*) FROM floor_msg WHERE memory = ?"), (memory,)).fetchone()
    return json.dumps({"id": memory, "messages": row[0]}).encode()


def load(memory: str, messages: list[dict]) -> None:
    """A memory's history, in one transaction: set-up, not a measured path (200 commits each were
    most of the time bench.load took to make the interleaved blocks' memories on PostgreSQL)."""
    conn = _conn()
    start = time.time_ns()
    rows = [_row(memory, message, start + i) for i, message in enumerate(messages)]
    sql = _q("INSERT INTO floor_msg VALUES (?, ?, ?, ?, ?, ?, ?)")
    if PG:
        with conn.transaction(), conn.cursor() as cursor:
            cursor.executemany(sql, rows)
    else:
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(sql, rows)
        conn.execute("COMMIT")


async def _body(receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    path = scope["path"]
    body = await _body(receive)
    status, out = 200, b'{"ok": true}'
    parts = path.strip("/").split("/")
    loop = asyncio.get_running_loop()
    if parts[0] == "decorate":
        out = await loop.run_in_executor(_pool, decorate, parts[1], body)
    elif parts[0] == "report":
        status = 202
        out = await loop.run_in_executor(_pool, report, parts[1], body)
    elif parts[0] == "memory":
        out = await loop.run_in_executor(_pool, memory_get, parts[1])
    elif parts[0] == "load":
        await loop.run_in_executor(_pool, load, parts[1], json.loads(body)["messages"])
    elif parts[0] != "healthz":
        status, out = 404, b'{"error": "not found"}'
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(out)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": out})


def setup() -> None:
    """Create the table (run once, before the server starts)."""
    conn = connect()
    conn.execute(SCHEMA)
    conn.execute(INDEX)
    conn.close()
