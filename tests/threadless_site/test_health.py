"""/healthz/worker (for monitors) and /readyz (for load balancers) read the worker's heartbeat
(common.heartbeat): stale past THREADLESS_WORKER_STALE_SECONDS is a 503 on the first, a line in
the body of the second. The live half (a real supervised worker stopped and started) is
tests/threadless_site/test_worker_supervision.py."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from rest_framework.test import APIClient

from common import heartbeat


@pytest.fixture
def own_var(settings, tmp_path):
    """A var dir and broker queue folder of this test's own (the heartbeat file and the queue live there)."""
    settings.VAR_DIR = tmp_path
    settings.THREADLESS_WORKER_STALE_SECONDS = 5
    queue = tmp_path / "broker" / "queue"
    queue.mkdir(parents=True)
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        **django_settings.CELERY_BROKER_TRANSPORT_OPTIONS,
        "data_folder_in": str(queue),
        "data_folder_out": str(queue),
    }
    if settings.REDIS_URL:  # the services run keeps the heartbeat in Redis: start from none
        heartbeat.store().client.delete(f"{heartbeat.REDIS_KEY}:{heartbeat.deployment_tag()}")
    return tmp_path


def test_healthz_worker_is_503_stale_when_no_worker_ever_beat(own_var):
    response = APIClient().get("/healthz/worker")
    assert response.status_code == 503
    body = response.json()
    assert body["worker"] == "stale" and body["lastHeartbeat"] is None and body["staleAfterSeconds"] == 5


def test_healthz_worker_is_200_while_the_heartbeat_is_fresh_and_503_once_it_is_older_than_the_limit(own_var):
    heartbeat.heartbeat_beat(hostname="worker-1")
    fresh = APIClient().get("/healthz/worker")
    assert fresh.status_code == 200 and fresh.json()["worker"] == "ok" and fresh.json()["ageSeconds"] < 5
    assert "hostname" not in fresh.json()  # an unauthenticated probe names no machine
    heartbeat.heartbeat_beat(hostname="worker-1", at=time.time() - 6)
    stale = APIClient().get("/healthz/worker")
    assert stale.status_code == 503 and stale.json()["worker"] == "stale" and stale.json()["ageSeconds"] >= 6
    assert stale["Cache-Control"] == "no-store"


@pytest.mark.parametrize("past_limit", [-0.06, 0.04, 0.06])
def test_the_age_a_probe_reads_agrees_with_its_verdict_at_the_limit(own_var, past_limit):
    heartbeat.heartbeat_beat(at=time.time() - 5 - past_limit)
    body = heartbeat.worker_state()
    assert (body["worker"] == "stale") == (body["ageSeconds"] > body["staleAfterSeconds"])


def test_readyz_reports_a_stale_worker_in_its_body_and_stays_ready(db, own_var):
    heartbeat.heartbeat_beat(at=time.time() - 600)
    response = APIClient().get("/readyz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok" and response.json()["worker"]["worker"] == "stale"


def test_healthz_worker_shows_the_queue_depth_and_the_oldest_message_age(own_var):
    if not django_settings.CELERY_BROKER_URL.startswith("threadless-fs://"):
        pytest.skip("queue figures are read from the embedded broker's folder")
    queue = Path(own_var) / "broker" / "queue"
    for n in (1, 2):
        (queue / f"{n}_x.celery.msg").write_text("{}")
    old = time.time() - 90
    os.utime(queue / "1_x.celery.msg", (old, old))
    body = APIClient().get("/healthz/worker").json()
    assert body["queue"]["depth"] == 2 and 89 <= body["queue"]["oldestAgeSeconds"] < 150


def test_a_damaged_heartbeat_reads_as_none(own_var, settings):
    if settings.REDIS_URL:
        pytest.skip("the file form")
    (Path(own_var) / heartbeat.FILE_NAME).write_text("{not json")
    assert heartbeat.heartbeat_last() is None
