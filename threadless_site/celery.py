"""The Celery app. Tasks live in each app's tasks.py and call services."""

import logging
import os
import sys
import time

from celery import Celery, bootsteps
from celery.signals import (
    after_setup_logger,
    after_setup_task_logger,
    task_postrun,
    task_prerun,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_shutdown,
)
from django.conf import settings
from django.utils.log import configure_logging

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")

from common import broker, logformat, logs, metrics  # noqa: E402 - metrics reads the settings: after DJANGO_SETTINGS_MODULE
from common.heartbeat import heartbeat_beat  # noqa: E402
from common.redaction import RedactingFilter  # noqa: E402
from threadless_site import tracing  # noqa: E402

broker.register()  # the embedded default's `threadless-fs://` (common.broker)


def _say_as_json(msg, f=sys.__stderr__):
    """celery.apps.worker.safe_say (what the worker's signal handlers print: "worker: Warm shutdown
    (MainProcess)") as one JSON line: one os.write, no logging lock, safe in a signal handler."""
    try:
        os.write(
            f.fileno(), (logformat.json_line("celery.apps.worker", logging.WARNING, msg) + "\n").encode()
        )
    except (OSError, ValueError, AttributeError):
        pass  # best effort, as Celery's own: a lost notice must never abort a shutdown


if settings.THREADLESS_LOG_FORMAT == "json":
    # What `celery worker` says before it sets up its logging (the superuser warning, a warning
    # through settings' logging.captureWarnings) goes through settings.LOGGING too, and what its
    # signal handlers print is JSON as well.
    from celery.apps import worker as celery_worker  # only here: the web processes never need it

    configure_logging(settings.LOGGING_CONFIG, settings.LOGGING)
    celery_worker.safe_say = _say_as_json

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


@after_setup_logger.connect
@after_setup_task_logger.connect
def _our_log_lines(logger=None, **kwargs):
    """The worker's log lines as the web's: Celery replaces the root logger's handlers (settings.LOGGING)
    with its own, so its handlers get the same redacting and request-context filters, and the JSON
    line format under THREADLESS_LOG_FORMAT=json (Celery's own line format otherwise)."""
    for handler in logger.handlers if logger is not None else ():
        handler.addFilter(RedactingFilter())
        handler.addFilter(logs.ContextFilter())
        if settings.THREADLESS_LOG_FORMAT == "json":
            handler.setFormatter(logformat.JsonFormatter())


@worker_init.connect
def _start_tracing_in_one_process_pools(sender=None, **kwargs):
    """The solo and thread pools run tasks in the worker's own process: install OpenTelemetry there."""
    pool = getattr(sender, "pool_cls", None)
    if not getattr(pool, "__module__", "celery.concurrency.prefork").startswith("celery.concurrency.prefork"):
        tracing.setup(service="threadless-worker")


@worker_process_init.connect
def _start_tracing(**kwargs):
    """Each prefork child installs OpenTelemetry itself (its exporter thread does not survive a fork)."""
    tracing.setup(service="threadless-worker")


@worker_process_shutdown.connect
@worker_shutdown.connect
def _flush_traces(**kwargs):
    tracing.flush()


@worker_process_init.connect
def _forget_inherited_db_pools(**kwargs):
    """A forked pool child must not use the parent's pooled sockets: drop them (never close
    them, which would end the parent's sessions); the child builds its own pool on first use."""
    from django.db.backends.postgresql.base import DatabaseWrapper

    DatabaseWrapper._connection_pools.clear()


_started: dict[str, float] = {}


@task_prerun.connect
def _job_started(task_id=None, **kwargs):
    _started[task_id] = time.perf_counter()


@task_postrun.connect
def _job_finished(task_id=None, task=None, state=None, **kwargs):
    """Every job's kind (the task's name: a fixed set), outcome and run time (common.metrics)."""
    started = _started.pop(task_id, None)
    if started is not None and task is not None:
        metrics.job(task.name, (state or "unknown").lower(), time.perf_counter() - started)
