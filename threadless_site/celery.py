"""The Celery app. Tasks live in each app's tasks.py and call services."""

import logging
import os

from celery import Celery, bootsteps
from celery.signals import worker_process_init
from django.conf import settings

from common import broker
from common.heartbeat import heartbeat_beat

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")

broker.register()  # the embedded default's `threadless-fs://` (common.broker)

app = Celery("threadless")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

log = logging.getLogger("threadless.worker")


class Heartbeat(bootsteps.StartStopStep):
    """Records every THREADLESS_WORKER_HEARTBEAT_SECONDS that this worker's consumer is up
    (common.heartbeat), from the consumer's own timer; /healthz/worker reads it."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent, **kwargs):
        super().__init__(parent, **kwargs)
        self.tref = None

    def start(self, c):
        self.hostname = c.hostname
        self.beat()
        self.tref = c.timer.call_repeatedly(settings.THREADLESS_WORKER_HEARTBEAT_SECONDS, self.beat)

    def stop(self, c):
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None

    def beat(self):
        try:
            heartbeat_beat(hostname=self.hostname)
        except Exception as exc:  # noqa: BLE001 - a missed beat shows as stale; never stop the worker
            log.warning("worker heartbeat not written (%s)", exc.__class__.__name__)


app.steps["consumer"].add(Heartbeat)


@worker_process_init.connect
def _forget_inherited_db_pools(**kwargs):
    """A forked pool child must not use the parent's pooled sockets: drop them (never close
    them, which would end the parent's sessions); the child builds its own pool on first use."""
    from django.db.backends.postgresql.base import DatabaseWrapper

    DatabaseWrapper._connection_pools.clear()
