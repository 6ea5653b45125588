"""The outbox: background work queued in the same transaction as the write that needs it,
handed to the broker after commit, claimed once, swept when a worker dies or the broker was down.

The outbox is the queue and the broker only wakes workers: each message asks for one job, and the
worker takes the next one in turn across projects (`outbox_claim_next`, whose docstring states
the bound), so one project's backlog never holds another project's report behind it."""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from datetime import timedelta
from queue import Empty, SimpleQueue

import orjson
from django.conf import settings
from django.db import DatabaseError, IntegrityError, OperationalError, connection, transaction
from django.db.models import F, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from common import tracing
from common.db import plain_cursor
from common.redaction import raw_error_text
from memories import events, queue
from memories.background import embed_missing, process_entries
from memories.models import Memory, Outbox, OutboxTurn

log = logging.getLogger("threadless.memories")


_INSERT_SQL = (
    f"INSERT INTO {Outbox._meta.db_table} (memory_id, project_id, kind, payload, created_at, attempts, "
    "last_error) VALUES (%s, %s, %s, %s{cast}, %s, 0, '') RETURNING id"
)


def outbox_insert_sql() -> str:
    """The outbox row's INSERT (memory id, its project's id, kind, payload JSON text, created_at)
    RETURNING its id: also SQLite's report (services.turn_join), inside its transaction."""
    return _INSERT_SQL.format(cast="::jsonb" if connection.vendor == "postgresql" else "")


def outbox_enqueue(*, memory_id: str, project_id: str, payload: dict, kind: str = "report") -> int:
    """Queue background work in the caller's transaction (one plain INSERT: this is on report's
    hot path); the row goes to the broker once the transaction commits. Returns the row's id."""
    with plain_cursor(prepare=True) as cursor:
        cursor.execute(
            outbox_insert_sql(),
            [
                memory_id,
                project_id,
                kind,
                orjson.dumps(payload).decode(),
                connection.ops.adapt_datetimefield_value(timezone.now()),
            ],
        )
        outbox_id = cursor.fetchone()[0]
    outbox_on_commit(outbox_id)
    return outbox_id


def outbox_on_commit(outbox_id: int) -> None:
    """Hand a row the caller wrote to the publisher once its transaction commits (at once in
    autocommit: the statement that wrote it has committed). The request's trace context goes
    along, so the worker's spans join the request's trace (common.tracing; None when off)."""
    captured = tracing.capture()
    transaction.on_commit(lambda: _publisher.submit(outbox_id, captured))


class _Publisher:
    """Hands committed outbox rows to the broker off the request thread: a publish (Celery's
    message building and the broker round trip, or a broker timeout) is not part of report's
    answer. Rows committed within LINGER_SECONDS of each other go as one message (up to
    MAX_BATCH), so a busy process pays one publish per burst, not one per report; and a process
    publishes at most once per MIN_INTERVAL_SECONDS: under load (a report every few ms) rows
    wait for the next publish instead of each burst of one or two paying Celery's message
    building and a broker round trip (~6–8 % of a loaded web process's samples: docs/tuning/serving.md), while
    a lone report still goes after LINGER_SECONDS. A row whose publish is lost (the process exits first, the
    broker is down) stays unprocessed, and the sweep re-queues it. With `task_always_eager` (tests) it
    publishes inline."""

    LINGER_SECONDS = 0.01
    MIN_INTERVAL_SECONDS = 0.05
    MAX_BATCH = 50

    def __init__(self) -> None:
        self._queue: SimpleQueue[tuple[int, object]] = SimpleQueue()
        self._pid = 0
        self._lock = threading.Lock()

    def submit(self, outbox_id: int, captured=None) -> None:
        if queue.is_eager():
            with tracing.attached(captured):
                outbox_publish(outbox_id=outbox_id)
            return
        if self._pid != os.getpid():  # first use in this process (also after a fork)
            with self._lock:
                if self._pid != os.getpid():
                    self._queue = SimpleQueue()
                    threading.Thread(
                        target=self._run, args=(self._queue,), name="outbox-publisher", daemon=True
                    ).start()
                    if not self._pid:
                        atexit.register(self.drain)
                    self._pid = os.getpid()
        self._queue.put((outbox_id, captured))

    @staticmethod
    def _publish(batch: list[tuple[int, object]]) -> None:
        """One message for the batch, published in the trace context of its first row's request."""
        ids = [outbox_id for outbox_id, _captured in batch]
        with tracing.attached(batch[0][1]):
            outbox_publish(outbox_id=ids if len(ids) > 1 else ids[0])

    @classmethod
    def _run(cls, pending: SimpleQueue) -> None:
        last = float("-inf")
        while True:
            batch = [pending.get()]
            # Let the rest of a burst arrive, and no sooner than MIN_INTERVAL after the last publish.
            time.sleep(max(cls.LINGER_SECONDS, last + cls.MIN_INTERVAL_SECONDS - time.monotonic()))
            while len(batch) < cls.MAX_BATCH:
                try:
                    batch.append(pending.get_nowait())
                except Empty:
                    break
            cls._publish(batch)
            last = time.monotonic()

    def drain(self, seconds: float = 2.0) -> None:
        """At exit: publish what is still waiting, for a moment (the sweep gets the rest)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            batch = []
            while len(batch) < self.MAX_BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except Empty:
                    break
            if not batch:
                return
            self._publish(batch)


_publisher = _Publisher()


def outbox_publish(*, outbox_id: int | list[int]) -> bool:
    """Hand a row (or a batch of rows, one message) to the broker. A broker outage is logged, not
    raised: the sweep re-queues them."""
    try:
        queue.send(queue.PROCESS_OUTBOX, outbox_id=outbox_id)
        return True
    except Exception as exc:  # noqa: BLE001 - any broker failure; the row stays for the sweep
        log.warning("outbox %s not queued (%s); the sweep will retry", outbox_id, exc.__class__.__name__)
        return False


def _claimable(now) -> QuerySet[Outbox]:
    """Rows a worker may take: waiting (neither processed nor parked), with attempts left, and
    unclaimed or claimed so long ago that its worker died."""
    stale = now - timedelta(seconds=settings.THREADLESS_OUTBOX_STALE_SECONDS)
    return Outbox.objects.filter(
        processed_at=None, parked_at=None, attempts__lt=settings.THREADLESS_OUTBOX_MAX_ATTEMPTS
    ).filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=stale))


def outbox_claim(*, outbox_id: int) -> Outbox | None:
    """Claim this row for processing, if it is claimable."""
    now = timezone.now()
    claimed = _claimable(now).filter(id=outbox_id).update(claimed_at=now, attempts=F("attempts") + 1)
    return Outbox.objects.filter(id=outbox_id).first() if claimed else None


CLAIM_TRIES = 10  # picks a worker makes when other workers keep taking the turn it chose

# The projects with waiting rows, one index probe each through outbox_waiting_idx (a "loose index
# scan": each step asks for the next project id after the last one), never a pass over the backlog.
# SQLite's planner prefers outbox_pending_idx here (a scan of every waiting row): `INDEXED BY` says which.
_WAITING_PROJECTS_SQL = (
    "WITH RECURSIVE waiting(project_id) AS ("
    "SELECT MIN(o.project_id) FROM {outbox} WHERE o.processed_at IS NULL AND o.parked_at IS NULL "
    "UNION ALL SELECT (SELECT MIN(o.project_id) FROM {outbox} "
    "WHERE o.processed_at IS NULL AND o.parked_at IS NULL AND o.project_id > w.project_id) "
    "FROM waiting w WHERE w.project_id IS NOT NULL"
    ") SELECT project_id FROM waiting WHERE project_id IS NOT NULL"
)


def _waiting_projects() -> list[str]:
    outbox = f"{Outbox._meta.db_table} o" + (
        " INDEXED BY outbox_waiting_idx" if connection.vendor == "sqlite" else ""
    )
    with connection.cursor() as cursor:
        cursor.execute(_WAITING_PROJECTS_SQL.replace("{outbox}", outbox))
        return [project_id for (project_id,) in cursor.fetchall()]


def outbox_claim_next() -> Outbox | None:
    """Claim the next job, round-robin across projects: the oldest claimable row of the waiting
    project whose turn (`OutboxTurn.served_at`) is the oldest, a project never served first.

    The bound: a project's turn is taken with a compare-and-set of its `served_at` before its row
    is claimed, so once a row is queued every other project takes at most one turn before the
    row's project does. With P projects waiting, at most P − 1 jobs of other projects start between
    a project's oldest row being queued and its start (besides the jobs already running then:
    at most the workers' concurrency), whatever the size of their backlogs; each of those jobs is
    bounded (memories.background: ENTRIES_PER_RUN entries, embeddings.CHUNK_CHARS of text). A
    project's own rows go oldest first. The order lives in the database, so it is the same on
    SQLite and PostgreSQL whatever the broker: a broker message only says that a job waits
    (`outbox_process_next`). Cost: one index probe per waiting project and a few more for the
    chosen one's row, whatever the number of rows waiting."""
    for _ in range(CLAIM_TRIES):
        now = timezone.now()
        waiting = _waiting_projects()
        if not waiting:
            return None
        turns = dict(OutboxTurn.objects.filter(project_id__in=waiting).values_list("project_id", "served_at"))
        if len(turns) < len(waiting):
            OutboxTurn.objects.bulk_create(
                [OutboxTurn(project_id=p) for p in waiting if p not in turns], ignore_conflicts=True
            )
        for project in sorted(waiting, key=lambda p: (turns.get(p) is not None, turns.get(p) or now, p)):
            head = (
                _claimable(now).filter(project_id=project).order_by("id").values_list("id", flat=True).first()
            )
            if head is not None:  # else its waiting rows are all being worked on: the next project
                break
        else:
            return None
        with transaction.atomic():  # the turn and the claim: one commit
            turn = OutboxTurn.objects.filter(project_id=project, served_at=turns.get(project))
            if not turn.update(served_at=now):
                continue  # another worker took this project's turn first
            row = outbox_claim(outbox_id=head)
        if row is not None:
            return row
    return None


def outbox_process_next() -> bool:
    """Run the next job in turn (`outbox_claim_next`): what each broker message asks a worker to do,
    whichever row it was published for. False when no row is waiting."""
    row = outbox_claim_next()
    if row is None:
        return False
    _run(row)
    return True


def outbox_process(*, outbox_id: int) -> bool:
    """Run this outbox row's background work exactly once (idempotent steps, claimed row)."""
    row = outbox_claim(outbox_id=outbox_id)
    if row is None:
        return False
    _run(row)
    return True


def _run(row: Outbox) -> None:
    """Do a claimed row's job, queue what it left (the rest of a long range, the vectors still
    missing: jobs of their own, behind the other projects' turns) and mark it processed, both in
    one transaction.

    A database error the task retries (a deadlock between two workers on one memory, a lock
    timeout) gives the claim back before it propagates, so the retry takes the row at once instead
    of waiting out THREADLESS_OUTBOX_STALE_SECONDS. Any other error keeps the claim: the row waits
    for the stale limit and the sweep, so a row that always fails is not retried in a tight loop.
    The attempt that reaches THREADLESS_OUTBOX_MAX_ATTEMPTS parks the row instead (`_park`)."""
    try:
        with tracing.span(
            "threadless.outbox.process",
            **{"threadless.outbox.kind": row.kind, "threadless.outbox.attempt": row.attempts},
        ):
            follow_ups = _work(row)
    except Exception as exc:
        if row.attempts >= settings.THREADLESS_OUTBOX_MAX_ATTEMPTS:
            _park(row, f"{exc.__class__.__name__}: {exc}")
        elif isinstance(exc, OperationalError):
            _release(row.id, exc)
        raise
    try:
        with transaction.atomic():
            for kind, payload in follow_ups:
                outbox_enqueue(memory_id=row.memory_id, project_id=row.project_id, kind=kind, payload=payload)
            if row.kind == "report" and all(kind != "report" for kind, _ in follow_ups):
                events.memory_processed(row)
            Outbox.objects.filter(id=row.id, processed_at=None).update(
                processed_at=timezone.now(), last_error=""
            )
    except IntegrityError:
        # The memory was deleted meanwhile: its rows, this one included, went with it.
        log.info("outbox %s: memory %s deleted during its job", row.id, row.memory_id)


def _work(row: Outbox) -> list[tuple[str, dict]]:
    """Run the row's job; the jobs it leaves, as (kind, payload)."""
    if row.kind == "vectors":
        step = embed_missing(memory_id=row.memory_id)
        return [("vectors", {})] if step["remaining"] and step["embedded"] else []
    done = process_entries(
        memory_id=row.memory_id,
        from_seq=row.payload.get("from_seq", 1),
        to_seq=row.payload.get("to_seq", 0),
    )
    follow_ups = [("report", done["rest"])] if done["rest"] else []
    if done.get("vectors", {}).get("due") and not _vectors_queued(row):
        follow_ups.append(("vectors", {}))
    return follow_ups


def _vectors_queued(row: Outbox) -> bool:
    """Whether a vectors job of the row's memory is waiting already (one is enough: it continues itself)."""
    return (
        Outbox.objects.filter(memory_id=row.memory_id, kind="vectors", processed_at=None, parked_at=None)
        .exclude(id=row.id)
        .exists()
    )


def _release(outbox_id: int, exc: Exception) -> None:
    """Give a failed row's claim back, naming the error class (never its text: it may quote data)."""
    try:
        Outbox.objects.filter(id=outbox_id, processed_at=None).update(
            claimed_at=None, last_error=exc.__class__.__name__
        )
    except DatabaseError:  # the connection itself is gone: the stale limit frees the row instead
        log.warning("outbox %s: claim not released (%s)", outbox_id, exc.__class__.__name__)


PARKED_REASON_CHARS = 500  # of the last failure's text, kept with a parked row


def _park(row: Outbox, reason: str) -> None:
    """Stop retrying a row whose job failed THREADLESS_OUTBOX_MAX_ATTEMPTS times: no worker takes
    it again, it no longer counts as waiting (the backlog, the memory's `processing`), and it stays
    in the table, deleted with its memory. `last_error` keeps the reason with secrets, URL
    credentials and query values removed (`raw_error_text`, what staff see of raw errors): the
    console's Overview shows it to the project's staff. Logged once, by the update that parks it."""
    reason = raw_error_text(reason, PARKED_REASON_CHARS)
    try:
        parked = Outbox.objects.filter(id=row.id, processed_at=None, parked_at=None).update(
            parked_at=timezone.now(), claimed_at=None, last_error=reason
        )
    except DatabaseError as exc:  # the connection itself is gone: the sweep parks it later
        log.warning("outbox %s: not parked (%s)", row.id, exc.__class__.__name__)
        return
    if parked:
        log.error(
            "outbox %s (%s job of memory %s) parked after %d attempts: %s",
            row.id,
            row.kind,
            row.memory_id,
            row.attempts,
            reason,
        )


def outbox_sweep() -> int:
    """Re-queue rows never picked up and rows whose claim went stale (a worker died mid-job); park
    the stale ones whose attempts are spent (their worker stopped every time: a crash or the time
    limit). A waiting row with no project (written by a process that predates the column, during
    an upgrade) gets its memory's, so the worker's turns see it."""
    Outbox.objects.filter(processed_at=None, project=None).update(
        project_id=Subquery(Memory.objects.filter(pk=OuterRef("memory_id")).values("project_id")[:1])
    )
    now = timezone.now()
    stale = now - timedelta(seconds=settings.THREADLESS_OUTBOX_STALE_SECONDS)
    waiting = now - timedelta(seconds=max(5, settings.THREADLESS_OUTBOX_SWEEP_SECONDS))
    free = Outbox.objects.filter(processed_at=None, parked_at=None).filter(
        Q(claimed_at__isnull=True) | Q(claimed_at__lt=stale)
    )
    for row in free.filter(attempts__gte=settings.THREADLESS_OUTBOX_MAX_ATTEMPTS)[:500]:
        _park(
            row,
            f"the job did not finish in {row.attempts} attempts (its worker stopped: crash or time limit)",
        )
    ids = list(
        free.filter(attempts__lt=settings.THREADLESS_OUTBOX_MAX_ATTEMPTS)
        .filter(Q(claimed_at__isnull=False) | Q(created_at__lt=waiting))
        .order_by("id")
        .values_list("id", flat=True)[:500]
    )
    for outbox_id in ids:
        outbox_publish(outbox_id=outbox_id)
    return len(ids)
