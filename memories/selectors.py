"""Reads. The window read is the hot path of decorate: plain rows through `entry_window_idx`,
newest first, in growing chunks, stopping as soon as the budget is met. Never a model instance,
never a serializer, never a COUNT over the memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import orjson
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.db.models import QuerySet
from django.db.models.fields.json import KeyTransform
from threadless.window import WindowFitter

from common.errors import InvalidRequest, NotFound
from memories.models import Entry, ErrorDigest, Fact, Memory
from projects.models import Project

WINDOW_COLUMNS = ("seq", "turn", "role", "content", "parts", "name", "tool_calls", "tool_call_id", "tokens")
FIRST_CHUNK = 64


_MEMORY_FIELDS = Memory._meta.concrete_fields
_MEMORY_SQL = f"SELECT {', '.join(f.column for f in _MEMORY_FIELDS)} FROM {Memory._meta.db_table} WHERE id = %s"
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
    with db.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    values = list(row)
    for pos, (converters, expression) in _memory_row_converters(db).items():
        value = values[pos]
        for convert in converters:
            value = convert(value, expression, db)
        values[pos] = value
    return Memory.from_db(db.alias, None, values)


def memory_missing(memory_id: str) -> NotFound:
    """The 404 of a memory id that is not in the caller's project (or nowhere)."""
    return NotFound(f"No memory '{memory_id}' in this project.", hint="Use an id that POST /v1/memories returned.")


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
    if (not isinstance(key, str) or not 1 <= len(key) <= METADATA_KEY_MAX or "__" in key
            or not _METADATA_KEY.fullmatch(key)):
        shown = key[:40] + ("…" if len(key) > 40 else "") if isinstance(key, str) else ""
        raise InvalidRequest(
            f"metadata.{shown}: a metadata filter key is a literal key of letters, digits, '_', '.' and '-' "
            f"(1 to {METADATA_KEY_MAX} characters, no '__').",
            hint="Filter with ?metadata.<key>=<value>, for example ?metadata.user=42.")
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


@dataclass
class Window:
    rows: list[tuple] = field(default_factory=list)  # WINDOW_COLUMNS, oldest first
    tokens: int = 0
    first_turn: int | None = None
    first_seq: int | None = None
    complete: bool = False  # every committed message before `before_seq` is in the window


def _window_sql(*, before: bool, limit: bool) -> str:
    table = Entry._meta.db_table
    where = "memory_id = %s AND committed AND kind = 'message'" + (" AND seq < %s" if before else "")
    # The literal `committed AND kind = 'message'` matches entry_window_idx's condition, so both
    # SQLite and PostgreSQL read the partial index backwards (a bound parameter would not match).
    return (f"SELECT {', '.join(WINDOW_COLUMNS)} FROM {table} WHERE {where} ORDER BY seq DESC"
            + (" LIMIT %s" if limit else ""))


def _json(value):
    return orjson.loads(value) if isinstance(value, (str, bytes)) else value


def _window_chunks(memory_id: str, before_seq: int | None, first_chunk: int):
    """Window rows newest first, a list of rows at a time (JSON columns still as the driver gives
    them). SQLite steps one statement only as far as it is read; elsewhere index range reads of
    growing size (a client-side cursor would fetch everything)."""
    db = connections[DEFAULT_DB_ALIAS]
    lazy = db.vendor == "sqlite"
    cursor_seq = before_seq
    chunk = first_chunk
    with db.cursor() as cursor:
        while True:
            params: list = [memory_id]
            if cursor_seq is not None:
                params.append(cursor_seq)
            if not lazy:
                params.append(chunk)
            cursor.execute(_window_sql(before=cursor_seq is not None, limit=not lazy), params)
            if lazy:
                # The driver's cursor itself, chunk by chunk, with Django's error mapping around it.
                with db.wrap_database_errors:
                    while rows := cursor.cursor.fetchmany(chunk):
                        yield rows
                return
            rows = cursor.fetchall()
            yield rows
            if len(rows) < chunk:
                return
            cursor_seq = rows[-1][0]
            chunk = min(chunk * 4, 4096)


def _decoded(row: tuple) -> tuple:
    # JSON columns arrive as text (Django's JSONField decodes them; we skip the ORM here).
    return (row[0], row[1], row[2], row[3], _json(row[4]), row[5], _json(row[6]), row[7], row[8])


def memory_window(
    *, memory_id: str, before_seq: int | None, budget: int, reserved: int, new_has_user: bool,
    expected_rows: int | None = None,
) -> Window:
    """The newest committed messages that fit (SPEC 4.3), oldest first.

    Plain rows straight from the cursor (no ORM row machinery: this is decorate's hot path).
    `expected_rows` (from the memory's average message size) sizes the first read, so a typical
    window is one index range read. Only the rows kept have their JSON columns decoded.
    """
    fitter = WindowFitter(budget, reserved, new_has_user)
    push = fitter.push
    fetched: list[tuple] = []
    exhausted = True
    for rows in _window_chunks(memory_id, before_seq, max(FIRST_CHUNK, expected_rows or 0)):
        fetched += rows
        for row in rows:
            if not push(row[8], row[2]):
                exhausted = False
                break
        if not exhausted:
            break
    keep = fitter.result()
    kept = [r if r[4] is None and r[6] is None else _decoded(r) for r in reversed(fetched[:keep])]
    window = Window(rows=kept, tokens=sum(r[8] for r in kept), complete=exhausted and keep == fitter.seen)
    if kept:
        window.first_turn = kept[0][1]
        window.first_seq = kept[0][0]
    return window


def _rows(sql: str, params: list) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


# The two small reads of every decorate run as plain SQL: compiling an ORM query costs more
# Python than a 100-message window (see docs/benchmarks.md).
_FAILURES_SQL = (
    f"SELECT turn, kind, task_id, content FROM {Entry._meta.db_table} "
    "WHERE memory_id = %s AND kind IN ('digest', 'error') AND committed AND turn >= %s ORDER BY seq DESC LIMIT %s"
)
_FACTS_SQL = (
    f"SELECT id, text, tokens FROM {Fact._meta.db_table} WHERE memory_id = %s AND active "
    "ORDER BY updated_at DESC LIMIT %s"
)


def failures_in_turns(*, memory_id: str, from_turn: int, limit: int = 50) -> list[tuple]:
    """The newest `limit` committed digest and error entries of turns from `from_turn` on, oldest
    first: (turn, kind, task_id, content)."""
    return list(reversed(_rows(_FAILURES_SQL, [memory_id, from_turn, limit])))


def active_facts(*, memory_id: str, limit: int = 200) -> list[tuple]:
    """(id, text, tokens) newest first."""
    return _rows(_FACTS_SQL, [memory_id, limit])


def fact_sources(*, fact_ids: list[str]) -> dict[str, list[int]]:
    """The entry ids each fact was extracted from (a fact written by a person has none)."""
    rows = Fact.objects.filter(pk__in=fact_ids).values_list("id", "source_entry_ids")
    return {fact_id: [int(x) for x in sources or [] if str(x).isdigit()] for fact_id, sources in rows}


def fact_list(*, memory: Memory, include_history: bool = False) -> QuerySet[Fact]:
    qs = Fact.objects.filter(memory=memory)
    if not include_history:
        qs = qs.filter(active=True)
    return qs.order_by("-updated_at", "-id")


def fact_get(*, memory: Memory, fact_id: str) -> Fact:
    fact = Fact.objects.filter(memory=memory, pk=fact_id).first()
    if fact is None:
        raise NotFound(f"No fact '{fact_id}' in this memory.", hint="Use an id that GET …/facts returned.")
    return fact


def entry_list(*, memory: Memory, include_uncommitted: bool = False) -> QuerySet[Entry]:
    qs = Entry.objects.filter(memory=memory)
    if not include_uncommitted:
        qs = qs.filter(committed=True)
    return qs.order_by("seq")


def digest_list(*, project: Project) -> QuerySet[ErrorDigest]:
    return ErrorDigest.objects.filter(project=project).order_by("-created_at")
