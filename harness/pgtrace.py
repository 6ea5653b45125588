"""Round trips to PostgreSQL, counted from libpq's protocol trace (the tests use it).

A round trip is each time the client asks for the server's answer and waits for it: a `Query`
(the simple protocol: Django's psycopg backend binds client side, so every plain statement, BEGIN
and COMMIT included, is one), or a `Sync` or `Flush` that ends statements sent in pipeline mode
(a `Flush` right after a `Sync` is the same wait). Statements sent in one pipeline share one,
however the server's answers interleave with the sending in the trace.

A prepared statement (common.db.plain_cursor) is sent as its name only (`Bind`): it is listed by its
text all the same, from its `Parse` or from the connection's record of what it prepared before;
preparing it (a named `Parse`, its first use on the connection) is listed as `prepare "…"`.
"""

from __future__ import annotations

import tempfile
from pathlib import Path


def round_trips(connection, fn) -> list[list[str]]:
    """Run `fn` and answer its round trips on Django's `connection`, each as the statements it
    waited for (their first 80 characters; an empty list for a bare sync)."""
    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    prepared = {
        name.decode(): f'"{query.decode()}"'  # psycopg's record: (query, types) -> name
        for (query, _types), name in connection.connection._prepared._names.items()
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace"
        with path.open("w") as fh:
            pgconn.trace(fh.fileno())
            try:
                fn()
            finally:
                pgconn.untrace()
        lines = path.read_text().splitlines()
    trips: list[list[str]] = []
    pending: list[str] = []  # statements sent in pipeline mode, not yet waited for
    last = ""
    for line in lines:
        fields = line.split("\t")
        if len(fields) < 4 or fields[1] != "F":
            continue
        kind, text = fields[3], fields[-1].strip()
        if kind == "Query":
            trips.append([*pending, text[:80]])
            pending = []
        elif kind == "Parse":  # the statement's name ("" unless it is prepared) first
            name, statement = text.split(" ", 1)
            if name == '""':
                pending.append(statement[:80])
            else:
                prepared[name.strip('"')] = statement[: statement.rfind('"') + 1]  # less its parameter types
                pending.append(f"prepare {statement[:80]}")
        elif kind == "Bind":  # the portal's name (""), then the statement's
            name = text.split(" ", 2)[1].strip('"')
            if name:
                pending.append(prepared.get(name, f"prepared {name}")[:80])
        elif kind == "Sync" or kind == "Flush" and last != "Sync":
            trips.append(pending)
            pending = []
        last = kind
    return trips
