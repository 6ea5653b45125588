"""The outbox (SPEC 4.4, 5): claimed exactly once; the sweep re-queues what nobody picked up."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from common.errors import InvalidRequest
from memories import services
from memories.models import Fact, Outbox
from threadless_site.celery import app


@pytest.fixture
def reported(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    services.memory_decorate(memory=memory, messages=[{"role": "user", "content": "hi"}])
    services.report_accept(memory=memory, messages=[{"role": "assistant", "content": "hello"}], failures=[])
    return Outbox.objects.get(memory=memory)


def age(row: Outbox, *, created: int = 0, claimed: int | None = None) -> None:
    now = timezone.now()
    Outbox.objects.filter(pk=row.pk).update(
        created_at=now - timedelta(seconds=created),
        claimed_at=None if claimed is None else now - timedelta(seconds=claimed),
    )


def test_a_row_is_processed_exactly_once(reported):
    assert services.outbox_process(outbox_id=reported.id) is True
    assert services.outbox_process(outbox_id=reported.id) is False
    row = Outbox.objects.get(pk=reported.pk)
    assert row.processed_at is not None and row.attempts == 1


def test_a_row_claimed_by_a_live_worker_is_not_taken_again(reported):
    assert services.outbox_claim(outbox_id=reported.id) is not None
    assert services.outbox_claim(outbox_id=reported.id) is None
    assert services.outbox_process(outbox_id=reported.id) is False


def test_a_row_whose_claim_went_stale_can_be_claimed_again(reported, settings):
    age(reported, created=600, claimed=settings.THREADLESS_OUTBOX_STALE_SECONDS + 5)
    assert services.outbox_process(outbox_id=reported.id) is True
    assert Outbox.objects.get(pk=reported.pk).attempts == 1


def test_the_sweep_requeues_rows_never_published_and_they_get_processed(reported, eager_celery):
    age(reported, created=120)
    assert services.outbox_sweep() == 1
    assert Outbox.objects.get(pk=reported.pk).processed_at is not None
    assert services.outbox_sweep() == 0


def test_the_sweep_requeues_rows_a_dead_worker_claimed_long_ago(reported, eager_celery, settings):
    age(reported, created=900, claimed=settings.THREADLESS_OUTBOX_STALE_SECONDS + 60)
    assert services.outbox_sweep() == 1
    assert Outbox.objects.get(pk=reported.pk).processed_at is not None


def test_the_sweep_leaves_fresh_rows_and_rows_being_worked_on(reported, eager_celery):
    assert services.outbox_sweep() == 0  # just written: its own publish is on the way
    age(reported, created=120, claimed=5)
    assert services.outbox_sweep() == 0  # claimed a moment ago by a live worker
    assert Outbox.objects.get(pk=reported.pk).processed_at is None


def test_the_outbox_row_is_written_in_the_reports_transaction(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    with pytest.raises(InvalidRequest):
        services.report_accept(memory=memory, messages=[], failures=[])
    assert not Outbox.objects.exists()
    services.report_accept(memory=memory, messages=[{"role": "assistant", "content": "x"}], failures=[])
    assert Outbox.objects.filter(memory=memory).count() == 1


def test_a_report_queues_its_outbox_row_only_after_commit(cast, django_capture_on_commit_callbacks):
    memory, _ = services.memory_create(project=cast.project_a)
    with django_capture_on_commit_callbacks() as callbacks:
        services.report_accept(memory=memory, messages=[{"role": "assistant", "content": "x"}], failures=[])
    assert len(callbacks) == 1


FIELDS = (
    "seq",
    "turn",
    "kind",
    "role",
    "content",
    "parts",
    "name",
    "tool_calls",
    "tool_call_id",
    "task_id",
    "key",
    "value",
    "committed",
    "tokens",
)
REPLY = [
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"q": "café ☕"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "42"},
    {"role": "assistant", "content": [{"type": "text", "text": "It is 42."}]},
]


def test_a_reply_joining_the_turn_stores_the_rows_and_counters_the_general_path_stores(cast):
    """report's plain-SQL path (messages_join_turn_enqueue) against entries_append on a twin memory."""
    from common.messages import entry_fields
    from memories.models import Entry, Memory

    fast, _ = services.memory_create(project=cast.project_a)
    slow, _ = services.memory_create(project=cast.project_a)
    for memory in (fast, slow):
        services.memory_decorate(memory=memory, messages=[{"role": "user", "content": "hi"}])
    answer = services.report_accept(memory=fast, messages=REPLY, failures=[])
    locked = Memory.objects.get(pk=slow.pk)
    services.entries_append(memory=locked, items=[entry_fields(m) for m in REPLY])

    def stored(memory):
        return [
            tuple(getattr(e, f) for f in FIELDS) for e in Entry.objects.filter(memory=memory).order_by("seq")
        ]

    assert answer == {"accepted": 3, "turn": 1, "task_errors": []}
    assert stored(fast) == stored(slow)
    assert stored(fast)[1][7][0]["function"]["arguments"] == '{"q": "café ☕"}'
    a, b = Memory.objects.get(pk=fast.pk), Memory.objects.get(pk=slow.pk)
    assert (
        (a.last_seq, a.last_turn, a.message_count, a.token_count)
        == (b.last_seq, b.last_turn, b.message_count, b.token_count)
        == (4, 1, 4, b.token_count)
    )
    assert a.last_used_at >= b.last_used_at - timedelta(seconds=5)
    assert Outbox.objects.get(memory=fast).payload == {"from_seq": 1, "to_seq": 4}


def test_a_report_on_a_memory_without_turns_opens_the_first_one(cast):
    from memories.models import Turn

    memory, _ = services.memory_create(project=cast.project_a)
    answer = services.report_accept(
        memory=memory, messages=[{"role": "assistant", "content": "hello"}], failures=[]
    )
    assert answer["turn"] == 1
    assert Turn.objects.filter(memory=memory, number=1).exists()
    assert Outbox.objects.get(memory=memory).payload == {"from_seq": 1, "to_seq": 1}


def test_rows_committed_together_go_to_the_broker_as_one_message(monkeypatch):
    import threading

    from memories.services import outbox as outbox_module

    sent: list = []
    arrived = threading.Event()

    def publish(*, outbox_id):
        sent.append(outbox_id)
        arrived.set()
        return True

    monkeypatch.setattr(outbox_module, "outbox_publish", publish)
    publisher = outbox_module._Publisher()
    monkeypatch.setattr(publisher, "drain", lambda seconds=0: None)
    assert not app.conf.task_always_eager  # (eager publishes inline, one row at a time)
    for outbox_id in (7, 8, 9):
        publisher.submit(outbox_id)
    assert arrived.wait(5)
    assert sent == [[7, 8, 9]]


def test_a_busy_process_publishes_at_most_once_per_interval_and_a_lone_row_soon(monkeypatch):
    import time

    from memories.services import outbox as outbox_module

    sent: list = []

    def publish(*, outbox_id):
        sent.append((time.monotonic(), outbox_id))
        return True

    monkeypatch.setattr(outbox_module, "outbox_publish", publish)
    publisher = outbox_module._Publisher()
    monkeypatch.setattr(publisher, "drain", lambda seconds=0: None)
    started = time.monotonic()
    publisher.submit(1)
    while not sent and time.monotonic() - started < 5:
        time.sleep(0.001)
    assert (
        sent and sent[0][0] - started < outbox_module._Publisher.MIN_INTERVAL_SECONDS
    )  # a lone row: after the linger
    busy = time.monotonic()
    for outbox_id in range(2, 62):  # a report every 2 ms or so
        publisher.submit(outbox_id)
        time.sleep(0.002)
    busy = time.monotonic() - busy
    while (
        sum(len(ids) if isinstance(ids, list) else 1 for _, ids in sent) < 61
        and time.monotonic() - started < 5
    ):
        time.sleep(0.005)
    assert sorted(i for _, ids in sent for i in (ids if isinstance(ids, list) else [ids])) == list(
        range(1, 62)
    )
    interval = outbox_module._Publisher.MIN_INTERVAL_SECONDS
    gaps = [b[0] - a[0] for a, b in zip(sent, sent[1:], strict=False)]
    assert min(gaps) >= interval * 0.9
    assert len(sent) <= 3 + busy / interval  # not one publish per row or per linger


def test_a_batch_message_processes_each_of_its_rows(cast, eager_celery):
    from memories.tasks import process_outbox

    ids = _unprocessed_rows(cast, 2)
    assert process_outbox.apply(args=[ids]).get() is True
    assert all(
        row.processed_at is not None and row.attempts == 1 for row in Outbox.objects.filter(id__in=ids)
    )


def test_a_batch_message_hands_the_rest_back_to_the_broker_once_its_time_is_spent(cast, monkeypatch):
    from memories.tasks import process_outbox

    ids = _unprocessed_rows(cast, 3)
    handed = []
    monkeypatch.setattr(services, "outbox_publish", lambda *, outbox_id: handed.append(outbox_id) or True)
    assert process_outbox.apply(kwargs={"outbox_id": ids, "budget_seconds": 0}).get() is True
    assert handed == [ids[1:]]  # two wake-ups, as one message
    assert Outbox.objects.filter(id__in=ids, processed_at__isnull=False).count() == 1


def test_a_database_error_gives_the_claim_back_and_the_retry_finishes_the_batch(
    cast, eager_celery, monkeypatch
):
    from django.db import OperationalError

    from memories.services import outbox as outbox_module
    from memories.tasks import process_outbox

    ids = _unprocessed_rows(cast, 2)
    first_memory = Outbox.objects.get(id=ids[0]).memory_id
    real, calls = outbox_module.process_entries, []

    def deadlocks_once(**kwargs):
        calls.append(kwargs["memory_id"])
        if kwargs["memory_id"] == first_memory and calls.count(first_memory) == 1:
            raise OperationalError("deadlock detected")
        return real(**kwargs)

    monkeypatch.setattr(outbox_module, "process_entries", deadlocks_once)
    assert process_outbox.apply(args=[ids]).get() is True
    rows = {row.id: row for row in Outbox.objects.filter(id__in=ids)}
    assert all(row.processed_at is not None for row in rows.values())
    assert rows[ids[0]].attempts == 2 and rows[ids[1]].attempts == 1  # the second row ran once
    assert rows[ids[0]].last_error == ""


def test_a_row_that_fails_otherwise_keeps_its_claim_until_the_stale_limit(reported, monkeypatch):
    from memories.services import outbox as outbox_module

    def fails(**kwargs):
        raise ValueError("not a database error")

    monkeypatch.setattr(outbox_module, "process_entries", fails)
    with pytest.raises(ValueError):
        services.outbox_process(outbox_id=reported.id)
    row = Outbox.objects.get(pk=reported.pk)
    assert row.claimed_at is not None and row.processed_at is None
    assert services.outbox_process(outbox_id=reported.id) is False


def _unprocessed_rows(cast, count: int) -> list[int]:
    """Outbox rows of `count` reported memories, none processed or claimed yet."""
    ids = []
    for i in range(count):
        memory, _ = services.memory_create(project=cast.project_a)
        services.memory_decorate(memory=memory, messages=[{"role": "user", "content": f"turn {i}"}])
        services.report_accept(memory=memory, messages=[{"role": "assistant", "content": "ok"}], failures=[])
        ids.append(Outbox.objects.get(memory=memory).id)
    Outbox.objects.filter(id__in=ids).update(processed_at=None, claimed_at=None, attempts=0)
    return ids


def _report(project, user: str, replies: list[str]):
    """A memory of `project` with one turn: the user's message, then a report of `replies`."""
    memory, _ = services.memory_create(project=project)
    services.memory_decorate(memory=memory, messages=[{"role": "user", "content": user}])
    services.report_accept(
        memory=memory, messages=[{"role": "assistant", "content": r} for r in replies], failures=[]
    )
    return memory


def test_one_projects_backlog_does_not_hold_back_another_projects_report(cast, monkeypatch):
    """Project A queues 20 reports, one of them 700 messages long; project B then reports one
    message. With the broker's messages delivered in the order they were published (both brokers
    are FIFO queues), B's job is among the first two jobs run: at most P - 1 = 1 job of A before it
    (outbox_claim_next's bound for P = 2 projects waiting). A's long report runs as bounded jobs
    that take turns too, and none of it is lost."""
    from memories.background import ENTRIES_PER_RUN
    from memories.services import outbox as outbox_module
    from memories.tasks import process_outbox

    long = _report(
        cast.project_a, "Here is our whole history.", [f"Line {i} of the log." for i in range(700)]
    )
    backlog = [long] + [_report(cast.project_a, f"I like tea number {i}.", ["ok"]) for i in range(19)]
    small = _report(cast.project_b, "I live in Oslo.", ["Noted."])
    project_of = {m.id: "A" for m in backlog} | {small.id: "B"}
    runs: list[tuple[str, int]] = []  # (project, messages indexed) of each job, in the order they ran
    real = outbox_module.process_entries

    def recording(**kwargs):
        done = real(**kwargs)
        runs.append((project_of[kwargs["memory_id"]], done["indexed"]))
        return done

    monkeypatch.setattr(outbox_module, "process_entries", recording)
    published = list(Outbox.objects.order_by("id").values_list("id", flat=True))  # the broker's order
    assert published[-1] == Outbox.objects.get(memory=small).id
    for outbox_id in published:
        process_outbox.apply(args=[outbox_id])
    while process_outbox.apply(args=[published[0]]).get():  # the sweep's wake-ups, for the rest
        pass

    assert [p for p, _ in runs].index("B") <= 1
    assert max(indexed for _, indexed in runs) <= ENTRIES_PER_RUN
    long.refresh_from_db()
    assert long.background_upto_seq == long.last_seq == 701
    assert Outbox.objects.filter(processed_at=None).count() == 0
    assert Fact.objects.filter(memory=small).exists()


def test_a_project_that_reports_again_is_served_before_a_busy_project_goes_twice(cast):
    """Round-robin, not first come first served: once A has had its turns, B's new report waits for
    at most one more job of A, however many A has waiting."""
    for i in range(6):
        _report(cast.project_a, f"I like tea number {i}.", ["ok"])
    _report(cast.project_b, "I live in Oslo.", ["Noted."])
    served = []
    for _ in range(4):
        row = services.outbox_claim_next()
        served.append(row.project_id)
        Outbox.objects.filter(pk=row.pk).update(processed_at=timezone.now())
    a, b = cast.project_a.id, cast.project_b.id
    assert sorted(served[:2]) == sorted([a, b]) and served[2:] == [a, a]  # B had one turn, A three
    again = _report(cast.project_b, "I work as a pharmacist.", ["Noted."])
    assert services.outbox_claim_next().memory_id == again.id


def test_a_row_that_always_fails_is_parked_after_its_attempts_and_never_retried(
    reported, monkeypatch, settings, caplog
):
    from memories.services import outbox as outbox_module

    settings.THREADLESS_OUTBOX_MAX_ATTEMPTS = 3
    runs = []

    def fails(**kwargs):
        runs.append(kwargs["memory_id"])
        raise ValueError("the extractor choked on api_key=sk-live-4f9a8b7c6d5e")

    monkeypatch.setattr(outbox_module, "process_entries", fails)
    for _ in range(3):
        with pytest.raises(ValueError):
            services.outbox_process_next()
        age(reported, created=600, claimed=settings.THREADLESS_OUTBOX_STALE_SECONDS + 5)  # as if stale
    assert len(runs) == 3
    row = Outbox.objects.get(pk=reported.pk)
    assert row.parked_at is not None and row.processed_at is None and row.attempts == 3
    assert row.last_error.startswith("ValueError: the extractor choked on api_key=")
    assert "sk-live" not in row.last_error
    assert services.outbox_claim_next() is None and services.outbox_process(outbox_id=row.id) is False
    assert services.outbox_sweep() == 0
    assert len(runs) == 3
    parked_lines = [r for r in caplog.records if "parked after 3 attempts" in r.getMessage()]
    assert len(parked_lines) == 1 and parked_lines[0].levelname == "ERROR"


def test_a_row_whose_database_error_never_clears_is_parked_too(reported, monkeypatch, settings):
    from django.db import OperationalError

    from memories.services import outbox as outbox_module

    settings.THREADLESS_OUTBOX_MAX_ATTEMPTS = 2

    def fails(**kwargs):
        raise OperationalError("too many SQL variables")

    monkeypatch.setattr(outbox_module, "process_entries", fails)
    for _ in range(2):  # each failure gives the claim back: the task's retry takes it at once
        with pytest.raises(OperationalError):
            services.outbox_process_next()
    row = Outbox.objects.get(pk=reported.pk)
    assert row.parked_at is not None and row.last_error == "OperationalError: too many SQL variables"
    assert services.outbox_claim_next() is None


def test_the_sweep_parks_a_row_whose_worker_stopped_on_every_attempt(reported, settings):
    settings.THREADLESS_OUTBOX_MAX_ATTEMPTS = 3
    Outbox.objects.filter(pk=reported.pk).update(attempts=3)
    age(reported, created=900, claimed=settings.THREADLESS_OUTBOX_STALE_SECONDS + 5)
    assert services.outbox_sweep() == 0  # not re-queued
    row = Outbox.objects.get(pk=reported.pk)
    assert row.parked_at is not None and "did not finish in 3 attempts" in row.last_error


def test_a_parked_row_leaves_the_memory_processed_and_out_of_the_backlog(reported, cast):
    from memories.selectors import outbox_backlog

    memory_id = reported.memory_id
    assert cast.a.get(f"/v1/memories/{memory_id}").json()["processing"] == "pending"
    Outbox.objects.filter(pk=reported.pk).update(parked_at=timezone.now(), last_error="ValueError: x")
    assert cast.a.get(f"/v1/memories/{memory_id}").json()["processing"] == "processed"
    assert outbox_backlog(project=cast.project_a).depth == 0


def test_the_sweep_gives_a_waiting_row_without_a_project_its_memorys(reported, cast):
    Outbox.objects.filter(pk=reported.pk).update(project=None)
    assert services.outbox_claim_next() is None  # the turns see rows by project
    services.outbox_sweep()
    assert services.outbox_claim_next().id == reported.id
