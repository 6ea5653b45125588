"""The lower bound: a plain table with an index on (memory, seq), read newest first with a
running token sum until the budget, then `json.dumps` — as fast as plain Python + the database
driver allow, with none of Threadless's layers. SQLite (stdlib `sqlite3`) on the embedded
default, PostgreSQL (`psycopg`) when the run is on PostgreSQL.

The write bound (`insert`) is what report must do by contract (SPEC 4.4) and nothing more, in
one transaction: take the next sequence number from the memory row and bump its counters (one
`UPDATE … RETURNING`: the durable, concurrency-safe way to number a message and join the newest
turn), insert the message, insert the outbox row that queues its background work, commit. No
idempotency row (the bench's reports send no Idempotency-Key) and no broker publish (that
happens after the answer).
"""

from __future__ import annotations

import json
import sqlite3

COLUMNS = "role, content, tool_calls, tool_call_id, tokens"


def _row_message(role: str, content: str, tool_calls: str | None, tool_call_id: str) -> dict:
    message = {"role": role, "content": content}
    if tool_calls:
        message["tool_calls"] = json.loads(tool_calls)
    if tool_call_id:
        message["tool_call_id"] = tool_call_id
    return message


def _cut(rows_newest_first, reserved: int, budget: int) -> list[tuple]:
    """Newest rows while the running sum fits; the window starts at a user message."""
    used = reserved
    taken: list[tuple] = []
    keep = 0
    for row in rows_newest_first:
        used += row[4]
        if used > budget:
            break
        taken.append(row)
        if row[0] == "user":
            keep = len(taken)
    del taken[keep:]
    taken.reverse()
    return taken


class SqliteLowerBound:
    def __init__(self, path: str) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS msg (memory INTEGER NOT NULL, seq INTEGER NOT NULL, role TEXT NOT "
            "NULL, content TEXT NOT NULL, tool_calls TEXT, tool_call_id TEXT NOT NULL, tokens INTEGER NOT "
            "NULL)"
        )
        self.conn.execute("CREATE INDEX IF NOT EXISTS msg_memory_seq ON msg (memory, seq)")
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS mem (id INTEGER PRIMARY KEY, last_seq INTEGER NOT NULL, "
            "last_turn INTEGER NOT NULL, message_count INTEGER NOT NULL, token_count INTEGER NOT NULL)"
        )
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS outbox (id INTEGER PRIMARY KEY, memory INTEGER NOT NULL, payload "
            "TEXT NOT NULL)"
        )

    def load(self, memory: int, messages: list[dict], tokens: list[int]) -> None:
        rows = [
            (
                memory,
                i + 1,
                m["role"],
                m.get("content") or "",
                json.dumps(m["tool_calls"]) if m.get("tool_calls") else None,
                m.get("tool_call_id") or "",
                t,
            )
            for i, (m, t) in enumerate(zip(messages, tokens, strict=True))
        ]
        self.conn.execute("BEGIN")
        self.conn.executemany("INSERT INTO msg VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        self.conn.execute(
            "INSERT INTO mem VALUES (?, ?, ?, ?, ?)",
            (memory, len(rows), sum(m["role"] == "user" for m in messages), len(rows), sum(tokens)),
        )
        self.conn.execute("COMMIT")

    def window(
        self, memory: int, new_messages: list[dict], reserved: int, budget: int
    ) -> tuple[str, list[dict]]:
        cursor = self.conn.execute(f"SELECT {COLUMNS} FROM msg WHERE memory = ? ORDER BY seq DESC", (memory,))
        rows = _cut(cursor, reserved, budget)
        cursor.close()
        messages = [_row_message(r[0], r[1], r[2], r[3]) for r in rows]
        messages.extend(new_messages)
        return json.dumps(messages), messages

    def insert(self, memory: int, message: dict, tokens: int) -> None:
        """One message, durably, with its counter update and outbox row (see the module's
        docstring): one transaction, committed (WAL, synchronous=NORMAL, as the server runs)."""
        self.conn.execute("BEGIN")
        seq, _turn = self.conn.execute(
            "UPDATE mem SET last_seq = last_seq + 1, message_count = message_count + 1, token_count = "
            "token_count + ? WHERE id = ? RETURNING last_seq, last_turn",
            (tokens, memory),
        ).fetchone()
        self.conn.execute(
            "INSERT INTO msg VALUES (?, ?, ?, ?, ?, ?, ?)",
            (memory, seq, message["role"], message.get("content") or "", None, "", tokens),
        )
        self.conn.execute(
            "INSERT INTO outbox (memory, payload) VALUES (?, ?)", (memory, json.dumps({"to_seq": seq}))
        )
        self.conn.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()


class PostgresLowerBound:
    """The same on PostgreSQL: chunked index range reads (a client-side cursor would fetch the
    whole memory), stopping as soon as the budget is met."""

    CHUNKS = (1024, 4096)

    def __init__(self, url: str) -> None:
        import psycopg

        self.conn = psycopg.connect(url, autocommit=True)
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS lb_msg (memory INTEGER NOT NULL, seq INTEGER NOT NULL, role TEXT NOT "
            "NULL, content TEXT NOT NULL, tool_calls TEXT, tool_call_id TEXT NOT NULL, tokens INTEGER NOT "
            "NULL)"
        )
        self.conn.execute("CREATE INDEX IF NOT EXISTS lb_msg_memory_seq ON lb_msg (memory, seq)")
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS lb_mem (id INTEGER PRIMARY KEY, last_seq INTEGER NOT NULL, "
            "last_turn INTEGER NOT NULL, message_count INTEGER NOT NULL, token_count INTEGER NOT NULL)"
        )
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS lb_outbox (id SERIAL PRIMARY KEY, memory INTEGER NOT NULL, "
            "payload JSONB NOT NULL)"
        )

    def load(self, memory: int, messages: list[dict], tokens: list[int]) -> None:
        rows = [
            (
                memory,
                i + 1,
                m["role"],
                m.get("content") or "",
                json.dumps(m["tool_calls"]) if m.get("tool_calls") else None,
                m.get("tool_call_id") or "",
                t,
            )
            for i, (m, t) in enumerate(zip(messages, tokens, strict=True))
        ]
        with self.conn.transaction(), self.conn.cursor() as cur:
            with cur.copy("COPY lb_msg FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            cur.execute(
                "INSERT INTO lb_mem VALUES (%s, %s, %s, %s, %s)",
                (memory, len(rows), sum(m["role"] == "user" for m in messages), len(rows), sum(tokens)),
            )
        self.conn.execute("ANALYZE lb_msg")

    def _rows(self, memory: int):
        before = 2**62
        for limit in (*self.CHUNKS, *([self.CHUNKS[-1]] * 1000)):
            rows = self.conn.execute(
                f"SELECT {COLUMNS}, seq FROM lb_msg WHERE memory = %s AND seq < %s ORDER BY seq DESC LIMIT "
                "%s",
                (memory, before, limit),
            ).fetchall()
            yield from rows
            if len(rows) < limit:
                return
            before = rows[-1][5]

    def window(
        self, memory: int, new_messages: list[dict], reserved: int, budget: int
    ) -> tuple[str, list[dict]]:
        rows = _cut(self._rows(memory), reserved, budget)
        messages = [_row_message(r[0], r[1], r[2], r[3]) for r in rows]
        messages.extend(new_messages)
        return json.dumps(messages), messages

    def insert(self, memory: int, message: dict, tokens: int) -> None:
        with self.conn.transaction():
            seq, _turn = self.conn.execute(
                "UPDATE lb_mem SET last_seq = last_seq + 1, message_count = message_count + 1, "
                "token_count = token_count + %s WHERE id = %s RETURNING last_seq, last_turn",
                (tokens, memory),
            ).fetchone()
            self.conn.execute(
                "INSERT INTO lb_msg VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (memory, seq, message["role"], message.get("content") or "", None, "", tokens),
            )
            self.conn.execute(
                "INSERT INTO lb_outbox (memory, payload) VALUES (%s, %s::jsonb)",
                (memory, json.dumps({"to_seq": seq})),
            )

    def close(self) -> None:
        self.conn.close()
