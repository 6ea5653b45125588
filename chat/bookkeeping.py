"""A turn's bookkeeping: the statements every turn runs besides its tasks' writes (is a turn of
the thread still running, the conversation's state, the turn's end, its events), as plain SQL.

Plain statements rather than the ORM, because these run on every turn and the ORM costs more
CPU than the statements themselves. Measured on SQLite with the offline `demo` model (2 CPUs
under load, CPU time per turn; the ORM forms were `values_list(...).first()`,
`filter(...).update(...)` and `bulk_create` of `TurnEvent`s):

* a whole turn, `python -m bench.pipeline_overhead 300`, runs in the order plain, ORM, ORM, plain:
  JSON say median 4.6 / 5.6 ms plain against 8.5 / 9.3 ms ORM; streamed say 5.6 / 8.8 ms
  against 13.7 / 13.7 ms;
* each statement alone, interleaved in one process: the newest-turn check 45 µs plain against
  619 µs ORM, the conversation's state 34 against 237, the turn's end 106 against 522, five
  events 82 against 487.

Same rows, same columns as the models say."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable

import orjson
from django.db import connection
from django.utils import timezone

from chat.models import Conversation, TurnEvent
from memories.models import Turn

log = logging.getLogger("threadless.chat")

Listener = Callable[[dict], None]

_LAST_TURN_SQL = (
    f"SELECT id, lease_expires_at IS NULL OR lease_expires_at >= %s FROM {Turn._meta.db_table} "
    "WHERE memory_id = %s AND thread = %s AND state = 'IN_PROGRESS' AND number = "
    f"(SELECT MAX(number) FROM {Turn._meta.db_table} WHERE memory_id = %s AND thread = %s)"
)
_CONVERSATION_STATE_SQL = (
    f"UPDATE {Conversation._meta.db_table} SET state = %s, updated_at = %s WHERE id = %s"
)


def last_turn_running(memory_id: str, thread: str) -> tuple[int, bool] | None:
    """(id, lease live?) of the thread's newest turn when it is IN_PROGRESS, else None."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(_LAST_TURN_SQL, [now, memory_id, thread, memory_id, thread])
        row = cursor.fetchone()
    return (row[0], bool(row[1])) if row else None


def turn_finish(
    *,
    memory_id: str,
    thread: str,
    number: int,
    state: str,
    actions: list,
    output: list,
    task_errors: list,
    duration_ms: int,
) -> None:
    """The turn's end: its state, what it did and said, its lease let go."""
    fields = [
        Turn._meta.get_field(n)
        for n in (
            "state",
            "actions",
            "output",
            "task_errors",
            "lease_expires_at",
            "finished_at",
            "duration_ms",
        )
    ]
    values = [state, actions, output, task_errors, None, timezone.now(), duration_ms]
    q = connection.ops.quote_name
    sets = ", ".join(f"{q(f.column)} = %s" for f in fields)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {q(Turn._meta.db_table)} SET {sets} "
            "WHERE memory_id = %s AND thread = %s AND number = %s",
            [f.get_db_prep_save(v, connection) for f, v in zip(fields, values, strict=True)]
            + [memory_id, thread, number],
        )


_EVENT_COLUMNS = ("conversation_id", "turn", "attempt", "seq", "name", "data", "created_at")
EVENTS_PER_INSERT = 500


def _json_text(value) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # what orjson refuses (an integer beyond 64 bits) the ORM's json.dumps stores
        return json.dumps(value)


def events_insert(rows: list[tuple]) -> None:
    """TurnEvent rows as multi-row INSERTs (a streamed turn records one event per token)."""
    cast = "::jsonb" if connection.vendor == "postgresql" else ""
    stamp = connection.ops.adapt_datetimefield_value(timezone.now())
    mark = f"(%s, %s, %s, %s, %s, %s{cast}, %s)"
    with connection.cursor() as cursor:
        for start in range(0, len(rows), EVENTS_PER_INSERT):
            part = rows[start : start + EVENTS_PER_INSERT]
            params: list = []
            for conversation_id, turn, attempt, seq, name, data in part:
                params += [conversation_id, turn, attempt, seq, name, _json_text(data), stamp]
            cursor.execute(
                f"INSERT INTO {TurnEvent._meta.db_table} ({', '.join(_EVENT_COLUMNS)}) VALUES "
                + ", ".join([mark] * len(part)),
                params,
            )


def conversation_state(conversation_id: str, state: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            _CONVERSATION_STATE_SQL,
            [state, connection.ops.adapt_datetimefield_value(timezone.now()), conversation_id],
        )


class EventLog:
    """Numbers, records (in small batches) and forwards a turn's events."""

    FLUSH_SECONDS = 0.5

    def __init__(
        self, *, conversation_id: str, turn: int, attempt: int, first_seq: int, listener: Listener | None
    ):
        self.attempt = (conversation_id, turn, attempt)  # the TurnEvent rows' first columns
        self.listener = listener
        self.seq = first_seq - 1
        self.pending: list[tuple] = []  # TurnEvent rows: conversation_id, turn, attempt, seq, name, data
        self.flushed_at = time.monotonic()

    def emit(self, name: str, data: dict, *, deliver: bool = True) -> dict:
        self.seq += 1
        event = {"id": self.seq, "event": name, "data": data}
        self.pending.append((*self.attempt, self.seq, name, data))
        if deliver:
            self.deliver(event)
        if name == "token" and time.monotonic() - self.flushed_at > self.FLUSH_SECONDS:
            self.flush()
        return event

    def deliver(self, event: dict) -> None:
        if self.listener is not None:
            try:
                self.listener(event)
            except Exception:  # noqa: BLE001 - a gone listener never stops the turn
                log.debug("event listener failed", exc_info=True)
                self.listener = None

    def flush(self) -> None:
        if self.pending:
            events_insert(self.pending)
            self.pending = []
        self.flushed_at = time.monotonic()
