"""Deliveries are queued by task name (the services never import the tasks that call them), as
memories.queue does for the outbox; see its docstring for why the task modules load only once."""

from __future__ import annotations

import threading

from celery import current_app

DELIVER = "webhooks.tasks.deliver"

_loaded: set[int] = set()
_loading = threading.Lock()


def send(task_name: str, /, **kwargs) -> None:
    app = current_app
    if id(app) not in _loaded and task_name not in app.tasks:
        with _loading:
            if id(app) not in _loaded:
                app.loader.import_default_modules()
                _loaded.add(id(app))
    app.tasks[task_name].apply_async(kwargs=kwargs)
