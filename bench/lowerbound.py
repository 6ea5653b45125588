"""The lower bound: a plain table with an index on (memory, seq), read newest first with a
running token sum until the budget, then `json.dumps` — as fast as plain Python + the database
driver allow, with none of Threadless's layers. SQLite (stdlib `sqlite3`) on the embedded
default, PostgreSQL (`psycopg`) when the run is on PostgreSQL.
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
            "CREATE TABLE IF NOT EXISTS msg (memory INTEGER NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL, "
            "content TEXT NOT NULL, tool_calls TEXT, tool_call_id TEXT NOT NULL, tokens INTEGER NOT NULL)")
        self.conn.execute("CREATE INDEX IF NOT EXISTS msg_memory_seq ON msg (memory, seq)")
        self.next_seq: dict[int, int] = {}

    def load(self, memory: int, messages: list[dict], tokens: list[int]) -> None:
        rows = [(memory, i + 1, m["role"], m.get("content") or "",
                 json.dumps(m["tool_calls"]) if m.get("tool_calls") else None, m.get("tool_call_id") or "", t)
                for i, (m, t) in enumerate(zip(messages, tokens, strict=True))]
        self.conn.execute("BEGIN")
        self.conn.executemany("INSERT INTO msg VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        self.conn.execute("COMMIT")
        self.next_seq[memory] = len(rows) + 1

    def window(self, memory: int, new_messages: list[dict], reserved: int, budget: int) -> tuple[str, list[dict]]:
        cursor = self.conn.execute(f"SELECT {COLUMNS} FROM msg WHERE memory = ? ORDER BY seq DESC", (memory,))
        rows = _cut(cursor, reserved, budget)
        cursor.close()
        messages = [_row_message(r[0], r[1], r[2], r[3]) for r in rows]
        messages.extend(new_messages)
        return json.dumps(messages), messages

    def insert(self, memory: int, message: dict, tokens: int) -> None:
        """One message, durably: insert + commit (WAL, synchronous=NORMAL, as the server runs)."""
        seq = self.next_seq[memory]
        self.next_seq[memory] = seq + 1
        self.conn.execute("BEGIN")
        self.conn.execute("INSERT INTO msg VALUES (?, ?, ?, ?, ?, ?, ?)",
                          (memory, seq, message["role"], message.get("content") or "", None, "", tokens))
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
            "CREATE TABLE IF NOT EXISTS lb_msg (memory INTEGER NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL, "
            "content TEXT NOT NULL, tool_calls TEXT, tool_call_id TEXT NOT NULL, tokens INTEGER NOT NULL)")
        self.conn.execute("CREATE INDEX IF NOT EXISTS lb_msg_memory_seq ON lb_msg (memory, seq)")
        self.next_seq: dict[int, int] = {}

    def load(self, memory: int, messages: list[dict], tokens: list[int]) -> None:
        rows = [(memory, i + 1, m["role"], m.get("content") or "",
                 json.dumps(m["tool_calls"]) if m.get("tool_calls") else None, m.get("tool_call_id") or "", t)
                for i, (m, t) in enumerate(zip(messages, tokens, strict=True))]
        with self.conn.transaction(), self.conn.cursor() as cur:
            with cur.copy("COPY lb_msg FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        self.conn.execute("ANALYZE lb_msg")
        self.next_seq[memory] = len(rows) + 1

    def _rows(self, memory: int):
        before = 2**62
        for limit in (*self.CHUNKS, *([self.CHUNKS[-1]] * 1000)):
            rows = self.conn.execute(
                f"SELECT {COLUMNS}, seq FROM lb_msg WHERE memory = %s AND seq < %s ORDER BY seq DESC LIMIT %s",
                (memory, before, limit)).fetchall()
            yield from rows
            if len(rows) < limit:
                return
            before = rows[-1][5]

    def window(self, memory: int, new_messages: list[dict], reserved: int, budget: int) -> tuple[str, list[dict]]:
        rows = _cut(self._rows(memory), reserved, budget)
        messages = [_row_message(r[0], r[1], r[2], r[3]) for r in rows]
        messages.extend(new_messages)
        return json.dumps(messages), messages

    def insert(self, memory: int, message: dict, tokens: int) -> None:
        seq = self.next_seq[memory]
        self.next_seq[memory] = seq + 1
        with self.conn.transaction():
            self.conn.execute("INSERT INTO lb_msg VALUES (%s, %s, %s, %s, %s, %s, %s)",
                              (memory, seq, message["role"], message.get("content") or "", None, "", tokens))

    def close(self) -> None:
        self.conn.close()
