"""The Celery app. Tasks live in each app's tasks.py and call services."""

import os

from celery import Celery
from celery.signals import worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")

app = Celery("threadless")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _forget_inherited_db_pools(**kwargs):
    """A forked pool child must not use the parent's pooled sockets: drop them (never close
    them, which would end the parent's sessions); the child builds its own pool on first use."""
    from django.db.backends.postgresql.base import DatabaseWrapper

    DatabaseWrapper._connection_pools.clear()
