"""common.db.plain_cursor: the driver's cursor for the hot paths, unless something watches."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.backends.utils import CursorWrapper
from django.test.utils import CaptureQueriesContext

from common.db import _qmark, plain_cursor
from memories.models import Memory
from memories.services import memory_create

pytestmark = pytest.mark.django_db


def test_placeholders_become_the_drivers_on_sqlite_and_a_literal_percent_stays():
    assert _qmark("SELECT %s, '%%', %s") == "SELECT ?, '%', ?"


def test_it_reads_what_djangos_cursor_reads(cast):
    memory, _ = memory_create(project=cast.project_a)
    sql = f"SELECT id, project_id, last_seq FROM {Memory._meta.db_table} WHERE id = %s"
    with connection.cursor() as cursor:
        cursor.execute(sql, [memory.id])
        expected = cursor.fetchall()
    with plain_cursor() as cursor:
        assert not isinstance(cursor, CursorWrapper)  # nothing watches: the driver's own cursor
        cursor.execute(sql, [memory.id])
        assert cursor.fetchall() == expected == [(memory.id, cast.project_a.pk, 0)]


def test_a_watched_connection_gets_djangos_cursor_so_every_statement_is_counted(cast):
    memory, _ = memory_create(project=cast.project_a)
    with CaptureQueriesContext(connection) as ctx, plain_cursor() as cursor:
        assert isinstance(cursor, CursorWrapper)
        cursor.execute(f"SELECT id FROM {Memory._meta.db_table} WHERE id = %s", [memory.id])
    assert len(ctx.captured_queries) == 1


def test_driver_errors_are_djangos_and_a_broken_transaction_is_refused(cast):
    memory, _ = memory_create(project=cast.project_a)
    with pytest.raises(IntegrityError), transaction.atomic():
        with plain_cursor() as cursor:  # the same primary key again
            cursor.execute(f"INSERT INTO {Memory._meta.db_table} (id) VALUES (%s)", [memory.id])
    with transaction.atomic():
        transaction.set_rollback(True)  # as after an error the block did not handle
        with pytest.raises(transaction.TransactionManagementError):
            plain_cursor()
    with plain_cursor() as cursor:  # usable again after the block
        cursor.execute(f"SELECT COUNT(*) FROM {Memory._meta.db_table} WHERE id = %s", [memory.id])
        assert cursor.fetchone() == (1,)


def test_a_statement_past_the_protocols_parameter_limit_still_runs():
    from common.db import SERVER_BINDING_MAX_PARAMS

    n = SERVER_BINDING_MAX_PARAMS + 10 if connection.vendor == "postgresql" else 1000
    with plain_cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM (VALUES {', '.join(['(%s)'] * n)}) AS v", list(range(n)))
        assert cursor.fetchone() == (n,)
        cursor.execute("SELECT %s", [2])  # and the cursor goes on
        assert cursor.fetchone() == (2,)
