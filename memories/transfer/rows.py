"""The rows an import makes, kept as their INSERT's parameters until the write sends them."""

from __future__ import annotations

from django.db import connection, models

MAX_PARAMS = 30_000  # parameters in one INSERT: within SQLite's 32,766 and PostgreSQL's 65,535


class InsertRows:
    """New rows of one table, each kept as its INSERT's parameters, prepared as Django prepares a
    save's (but without auto_now: a row keeps the times it was given), so the write only sends them.
    Every column but an automatic id is sent, those with a database default (`thread`) included."""

    def __init__(self, model: type[models.Model]) -> None:
        self.model = model
        self.fields = [f for f in model._meta.concrete_fields if f is not model._meta.auto_field]
        self.rows: list[list] = []

    def add(self, obj: models.Model) -> list:
        row = [f.get_db_prep_save(getattr(obj, f.attname), connection) for f in self.fields]
        self.rows.append(row)
        return row

    def column(self, name: str) -> int:
        return next(i for i, f in enumerate(self.fields) if f.name == name)

    def insert(self, cursor, returning: tuple[str, ...] = ()) -> list[tuple]:
        """Write the rows, as many to a statement as MAX_PARAMS allows; the `returning` columns of each."""
        q = connection.ops.quote_name
        columns = ", ".join(q(f.column) for f in self.fields)
        head = f"INSERT INTO {q(self.model._meta.db_table)} ({columns}) VALUES "
        marks = "(" + ", ".join(["%s"] * len(self.fields)) + ")"
        tail = f" RETURNING {', '.join(q(c) for c in returning)}" if returning else ""
        per = max(1, MAX_PARAMS // len(self.fields))
        made: list[tuple] = []
        for start in range(0, len(self.rows), per):
            chunk = self.rows[start : start + per]
            cursor.execute(head + ", ".join([marks] * len(chunk)) + tail, [p for row in chunk for p in row])
            if returning:
                made += cursor.fetchall()
        return made
