"""The Overview's background-worker card: last heartbeat, queue depth, oldest message age; red when stale."""

from __future__ import annotations

import os
import re
import time

import pytest
from django.conf import settings as django_settings

from common import heartbeat


@pytest.fixture
def own_var(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    settings.THREADLESS_WORKER_STALE_SECONDS = 60
    queue = tmp_path / "broker" / "queue"
    queue.mkdir(parents=True)
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        **django_settings.CELERY_BROKER_TRANSPORT_OPTIONS,
        "data_folder_in": str(queue),
        "data_folder_out": str(queue),
    }
    if settings.REDIS_URL:
        heartbeat.store().client.delete(f"{heartbeat.REDIS_KEY}:{heartbeat.deployment_tag()}")
    return tmp_path


def card(html: str) -> str:
    return re.search(r'<section class="card[^"]*" id="worker-status".*?</section>', html, re.S).group(0)


def test_the_overview_shows_a_running_worker_with_its_heartbeat_and_queue(staff_client, own_var):
    heartbeat.heartbeat_beat(hostname="worker-<b>1</b>", at=time.time() - 3)
    if django_settings.CELERY_BROKER_URL.startswith("threadless-fs://"):
        for n in (1, 2, 3):
            (own_var / "broker" / "queue" / f"{n}_x.celery.msg").write_text("{}")
        old = time.time() - 42
        os.utime(own_var / "broker" / "queue" / "1_x.celery.msg", (old, old))
    html = card(staff_client.get("/manage/").content.decode())
    assert 'class="card"' in html and "badge-ok" in html and "running" in html
    assert re.search(r"\b[3-9] s ago", html) and "worker-&lt;b&gt;1&lt;/b&gt;" in html  # escaped
    if django_settings.CELERY_BROKER_URL.startswith("threadless-fs://"):
        assert "3 messages waiting" in html and re.search(r"4[2-9] s old", html)


def test_the_overview_shows_a_stale_worker_in_red(staff_client, own_var):
    heartbeat.heartbeat_beat(at=time.time() - 300)
    html = card(staff_client.get("/manage/").content.decode())
    assert "notice-err" in html and "badge-err" in html and "stale" in html
    assert re.search(r"30[0-9] s ago", html) and 'role="alert"' in html


def test_the_overview_says_never_when_no_worker_ever_beat(staff_client, own_var):
    html = card(staff_client.get("/manage/").content.decode())
    assert "never" in html and "notice-err" in html
