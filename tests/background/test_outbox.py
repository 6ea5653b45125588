"""The outbox (SPEC 4.4, 5): claimed exactly once; the sweep re-queues what nobody picked up."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from common.errors import InvalidRequest
from memories import services
from memories.models import Outbox
from threadless_site.celery import app


@pytest.fixture
def eager_celery():
    """Publishing runs the task in this process: the sweep's re-queue is observable directly."""
    old = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = old


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
