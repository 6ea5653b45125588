"""A memory's row: by id (decorate's, report's and the pipeline's hot paths read it as plain SQL
with the ORM's converters), by external id, scoped to a project, or listed with metadata filters.
"""

from __future__ import annotations

import re

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import QuerySet
from django.db.models.fields.json import KeyTransform

from common.db import plain_cursor
from common.errors import InvalidRequest, NotFound
from memories.models import Memory
from projects.models import Project

_MEMORY_FIELDS = Memory._meta.concrete_fields
_MEMORY_SQL = (
    f"SELECT {', '.join(f.column for f in _MEMORY_FIELDS)} FROM {Memory._meta.db_table} WHERE id = %s"
)
_memory_converters: dict[str, dict] = {}


def _memory_row_converters(db) -> dict:
    """The ORM's own column converters for a Memory row (JSON decoding, SQLite datetimes), built
    once per database vendor: position -> (converters, column expression)."""
    found = _memory_converters.get(db.vendor)
    if found is None:
        compiler = db.ops.compiler("SQLCompiler")(Memory.objects.all().query, db, db.alias)
        found = compiler.get_converters([f.get_col(Memory._meta.db_table) for f in _MEMORY_FIELDS])
        _memory_converters[db.vendor] = found
    return found


def memory_fetch(*, memory_id: str, project_id: str | None = None, lock: bool = False) -> Memory | None:
    """One memory by id (and project, when given), or None; `lock` takes its row lock until the
    transaction ends (SELECT … FOR UPDATE where the database has it; SQLite's write transaction
    is the lock there).

    A plain query with the ORM's converters and `from_db` (same columns, the same instance): the
    ORM's query compilation and raw-query machinery cost more than the lookup itself on
    decorate's, report's and the pipeline's hot paths."""
    db = connections[DEFAULT_DB_ALIAS]  # one thread-local lookup, not one per attribute
    sql, params = _MEMORY_SQL, [memory_id]
    if project_id is not None:
        sql += " AND project_id = %s"
        params.append(project_id)
    if lock and db.features.has_select_for_update:
        sql += " FOR UPDATE"
    with plain_cursor(prepare=True) as cursor:  # four texts (project, lock): prepared on PostgreSQL
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return None if row is None else memory_from_row(row, db)


def memory_by_external_id(*, project: Project, external_id: str) -> Memory | None:
    """The project's memory with this `external_id`, or None: `memory_fetch`'s plain query by
    the (project, external_id) unique pair, the project set on it (no second read)."""
    db = connections[DEFAULT_DB_ALIAS]
    with plain_cursor(prepare=True) as cursor:
        cursor.execute(_MEMORY_BY_EXTERNAL_SQL, [project.pk, external_id])
        row = cursor.fetchone()
    if row is None:
        return None
    memory = memory_from_row(row, db)
    Memory.project.field.set_cached_value(memory, project)
    return memory


_MEMORY_BY_EXTERNAL_SQL = (
    f"SELECT {', '.join(f.column for f in _MEMORY_FIELDS)} FROM {Memory._meta.db_table} "
    "WHERE project_id = %s AND external_id = %s"
)
MEMORY_COLUMNS = tuple(f.column for f in _MEMORY_FIELDS)  # a row's order for `memory_from_row`


def memory_from_row(row, db=None) -> Memory:
    """A Memory from a row of MEMORY_COLUMNS as the driver gives it (a `RETURNING` of the write
    path, say), through the ORM's own converters and `from_db`."""
    db = db or connections[DEFAULT_DB_ALIAS]
    values = list(row)
    for pos, (converters, expression) in _memory_row_converters(db).items():
        value = values[pos]
        for convert in converters:
            value = convert(value, expression, db)
        values[pos] = value
    return Memory.from_db(db.alias, None, values)


def memory_missing(memory_id: str) -> NotFound:
    """The 404 of a memory id that is not in the caller's project (or nowhere)."""
    return NotFound(
        f"No memory '{memory_id}' in this project.", hint="Use an id that POST /v1/memories returned."
    )


def memory_get(*, project: Project, memory_id: str) -> Memory:
    """The one way API code reaches a memory: scoped to the key's project, else 404."""
    memory = memory_fetch(memory_id=memory_id, project_id=project.pk)
    if memory is None:
        raise memory_missing(memory_id)
    Memory.project.field.set_cached_value(memory, project)  # the row it was scoped by: no second read
    return memory


METADATA_KEY_MAX = 100
_METADATA_KEY = re.compile(r"[A-Za-z0-9_.-]+")  # one class, no nesting: linear time


def metadata_filter_key(key: str) -> str:
    """A `metadata.<key>` filter's key, checked to be a literal JSON key (else 400 naming it).

    Only `[A-Za-z0-9_.-]`, never `__`: the key must not be able to name an ORM lookup
    (`x__regex`) or traverse into nested objects.
    """
    if (
        not isinstance(key, str)
        or not 1 <= len(key) <= METADATA_KEY_MAX
        or "__" in key
        or not _METADATA_KEY.fullmatch(key)
    ):
        shown = key[:40] + ("…" if len(key) > 40 else "") if isinstance(key, str) else ""
        raise InvalidRequest(
            f"metadata.{shown}: a metadata filter key is a literal key of letters, digits, '_', '.' and '-' "
            f"(1 to {METADATA_KEY_MAX} characters, no '__').",
            hint="Filter with ?metadata.<key>=<value>, for example ?metadata.user=42.",
        )
    return key


def memory_list(
    *, project: Project, external_id: str | None = None, metadata: dict | None = None
) -> QuerySet[Memory]:
    qs = Memory.objects.filter(project=project)
    if external_id is not None:
        qs = qs.filter(external_id=external_id)
    for i, (key, value) in enumerate((metadata or {}).items()):
        # An explicit key transform: the key is data, never parsed as `__` lookups by the ORM.
        alias = f"_metadata_{i}"
        qs = qs.alias(**{alias: KeyTransform(metadata_filter_key(key), "metadata")}).filter(**{alias: value})
    return qs.order_by("-created_at", "-id")
