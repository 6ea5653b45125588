"""The Celery app. Tasks live in each app's tasks.py and call services."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")

app = Celery("threadless")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
