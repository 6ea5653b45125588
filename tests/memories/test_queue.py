"""memories.queue: work is queued by task name, and each name is a task the worker runs."""

from __future__ import annotations

import pytest

from memories import queue, services
from memories.models import Outbox
from threadless_site.celery import app

NAMES = [queue.PROCESS_OUTBOX]


@pytest.fixture
def eager(request):
    old = app.conf.task_always_eager
    app.conf.task_always_eager = request.param
    yield
    app.conf.task_always_eager = old


@pytest.mark.parametrize("name", NAMES)
def test_every_task_name_queued_is_a_task_the_worker_registers(name):
    app.loader.import_default_modules()  # what the worker does at start
    assert app.tasks[name].name == name


def test_a_name_no_task_registers_is_refused():
    with pytest.raises(KeyError):
        queue.send("memories.tasks.no_such_task", memory_id="mem_1")


@pytest.mark.parametrize("eager", [True], indirect=True)
def test_a_task_sent_by_name_runs_inline_when_tasks_are_eager(cast, eager):
    memory, _ = services.memory_create(project=cast.project_a)
    services.memory_decorate(memory=memory, messages=[{"role": "user", "content": "I have a beagle."}])
    services.report_accept(memory=memory, messages=[{"role": "assistant", "content": "nice"}], failures=[])
    row = Outbox.objects.get(memory=memory)
    Outbox.objects.filter(pk=row.pk).update(processed_at=None, claimed_at=None, attempts=0)
    queue.send(queue.PROCESS_OUTBOX, outbox_id=row.id)
    row.refresh_from_db()
    assert row.processed_at is not None and row.attempts == 1


@pytest.mark.parametrize("eager", [False], indirect=True)
def test_a_task_sent_by_name_goes_to_the_broker_with_its_keyword_arguments(eager, monkeypatch):
    published = []
    monkeypatch.setattr(
        app.amqp,
        "send_task_message",
        lambda producer, name, message, **options: published.append((name, message)),
    )
    queue.send(queue.PROCESS_OUTBOX, outbox_id=7)
    assert len(published) == 1
    name, message = published[0]
    assert name == queue.PROCESS_OUTBOX
    assert message.headers["task"] == queue.PROCESS_OUTBOX
    assert message.body[1] == {"outbox_id": 7}  # (args, kwargs, embed)


@pytest.mark.parametrize("eager", [False], indirect=True)
def test_a_process_that_has_its_tasks_already_does_not_load_them_again(eager, monkeypatch):
    # A worker imported its task modules at start; loading them again runs Django's setup again
    # (Celery's Django fixup), whose logging configuration silences the worker's log lines.
    app.loader.import_default_modules()  # what the worker does at start
    monkeypatch.setattr(queue, "_loaded", set())  # a pool child that has not queued anything yet
    loads = []
    monkeypatch.setattr(app.loader, "import_default_modules", lambda: loads.append(1))
    monkeypatch.setattr(app.amqp, "send_task_message", lambda producer, name, message, **options: None)
    queue.send(queue.PROCESS_OUTBOX, outbox_id=7)
    assert loads == []
