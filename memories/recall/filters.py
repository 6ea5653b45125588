"""What a search may be narrowed to: the speaker's role and a span of message times. Each filter is
a condition of the SQL that reads candidates (the index's rows on the words' path, the entries'
rows by (memory, seq) on the neighbours' and the nearest vectors' path), so a narrowed search
reads no more rows than a plain one and never filters a whole memory in Python."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from django.db import connection


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Filters:
    """`role`: only that speaker's messages. `after` / `before`: only messages said at or after /
    strictly before these times (aware datetimes: a half-open span, so consecutive spans never
    share a message)."""

    role: str | None = None
    after: datetime | None = None
    before: datetime | None = None

    def __bool__(self) -> bool:
        return self.role is not None or self.after is not None or self.before is not None

    def index_where(self, postgresql: bool) -> tuple[str, list]:
        """(" AND …", params) on the recall index's `role` and `created_at`. SQLite's index holds
        `created_at` as UTC ISO text (memories.recall.index), which orders as the times do."""
        return self._where(lambda at: at if postgresql else at.astimezone(UTC).isoformat())

    def entries_where(self) -> tuple[str, list]:
        """(" AND …", params) on the entries table's `role` and `created_at`, in the form the
        database backend stores a datetime."""
        return self._where(connection.ops.adapt_datetimefield_value)

    def _where(self, at) -> tuple[str, list]:
        sql, params = "", []
        if self.role is not None:
            sql += " AND role = %s"
            params.append(self.role)
        if self.after is not None:
            sql += " AND created_at >= %s"
            params.append(at(self.after))
        if self.before is not None:
            sql += " AND created_at < %s"
            params.append(at(self.before))
        return sql, params


NO_FILTERS = Filters()
