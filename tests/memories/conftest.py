"""Fixtures shared by the memories tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def eager_celery():
    """A queued job runs in this process at once, so what it does is observable directly."""
    from threadless_site.celery import app

    old = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = old
