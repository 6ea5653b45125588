"""Background work is queued here, by task name: the code that queues a task never imports it.

Tasks (memories.tasks, each app's tasks.py) sit above the services they call; a service, or a
step of the worker's, that wants a task run later names it here instead of importing it. The
app's task modules are loaded once per process, as the worker loads them, so the name resolves
to the task itself and is sent through its own `apply_async`: with `task_always_eager` (the
tests) it runs inline, and the tracing of a publish sees a known task. A name no task module
registers is a KeyError here, never a message that no worker would take.
"""

from __future__ import annotations

import threading

from celery import current_app

PROCESS_OUTBOX = "memories.tasks.process_outbox"

_loaded: set[int] = set()
_loading = threading.Lock()


def _tasks(app, task_name: str):
    """The app's task registry, its task modules imported (Celery's autodiscovery) on first use,
    unless it holds the task already: a worker process imported them at start, and importing them
    again there runs Django's setup again (Celery's Django fixup), whose logging configuration
    replaces the worker's own: its log lines would stop."""
    if id(app) not in _loaded and task_name not in app.tasks:
        with _loading:
            if id(app) not in _loaded:
                app.loader.import_default_modules()
                _loaded.add(id(app))
    return app.tasks


def send(task_name: str, /, **kwargs) -> None:
    """Queue `task_name` with these keyword arguments. Publishing follows the app's settings
    (CELERY_TASK_PUBLISH_RETRY is off: a broker outage raises here at once)."""
    _tasks(current_app, task_name)[task_name].apply_async(kwargs=kwargs)


def is_eager() -> bool:
    """Whether queued tasks run inline (CELERY_TASK_ALWAYS_EAGER: the tests)."""
    return bool(current_app.conf.task_always_eager)
