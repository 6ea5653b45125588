"""Deliveries are queued by task name (the services never import the tasks that call them), as
memories.queue does for the outbox; see its docstring for why the task modules load only once.

`submit` publishes off the committing thread (a publish is a broker round trip, an fsync on the
embedded broker: not part of the answer of the request that made the change), as the outbox's
publisher does. A publish lost to a broker outage or to the process ending is not lost work: the
delivery rows wait, and the sweep sends them.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from queue import SimpleQueue

from celery import current_app

log = logging.getLogger("threadless.webhooks")

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


class _Publisher:
    """One daemon thread per process (started on first use, again after a fork) that runs the
    publishes handed to it, in order. With `task_always_eager` (the tests) a publish runs inline."""

    def __init__(self) -> None:
        self._pending: SimpleQueue[Callable[[], None]] = SimpleQueue()
        self._pid = 0
        self._lock = threading.Lock()

    def submit(self, publish: Callable[[], None]) -> None:
        if current_app.conf.task_always_eager:
            publish()
            return
        if self._pid != os.getpid():
            with self._lock:
                if self._pid != os.getpid():
                    self._pending = SimpleQueue()
                    threading.Thread(
                        target=self._run, args=(self._pending,), name="webhooks-publisher", daemon=True
                    ).start()
                    self._pid = os.getpid()
        self._pending.put(publish)

    @staticmethod
    def _run(pending: SimpleQueue) -> None:
        while True:
            publish = pending.get()
            try:
                publish()
            except Exception:  # noqa: BLE001 - never let one publish stop the thread; the sweep retries
                log.exception("webhook publish failed; the sweep will send its deliveries")


_publisher = _Publisher()


def submit(publish: Callable[[], None]) -> None:
    """Run `publish` (a broker publish) off this thread."""
    _publisher.submit(publish)
