"""Shared test cast (healthchecks' BaseTestCase idea) and real-process fixtures.

The cast: project A with its project key (`a`) and, on first use, an agent of A with a
publishable key (`agent_a`, `publishable_a`); project B with its own key (`b`); a staff account
that administers both; a signed-in non-staff user (`user`, the console refuses them); and the
anonymous visitor (`anon`: no key, no session).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property

import pytest
from django.contrib.auth import get_user_model
from hypothesis import settings as hypothesis_settings
from rest_framework.test import APIClient

from harness.servers import ThreadlessServer
from projects.services import key_create, project_create
from providers.egress import egress_caches_forget

pytest_plugins = ["tests.fixtures.api"]

# In CI the property tests draw the same examples every run (a red CI must be reproducible); a
# developer's run explores new ones (`HYPOTHESIS_PROFILE=explore` forces that in CI too).
hypothesis_settings.register_profile("ci", derandomize=True, database=None)
hypothesis_settings.register_profile("explore")
hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "explore")
)


@dataclass
class Cast:
    project_a: object
    key_a: str
    project_b: object
    key_b: str
    staff: object
    user: object

    def api(self, key: str | None = None) -> APIClient:
        client = APIClient()
        if key is not None:
            client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        return client

    @property
    def a(self) -> APIClient:
        return self.api(self.key_a)

    @property
    def b(self) -> APIClient:
        return self.api(self.key_b)

    @property
    def anon(self) -> APIClient:
        return self.api()

    @cached_property
    def agent_a(self):
        """An agent of project A (created on first use, so tests that count agents see none)."""
        from chat.services import DEMO_CONFIG, agent_create

        return agent_create(project=self.project_a, name="Cast agent", config=DEMO_CONFIG)

    @cached_property
    def publishable_a(self) -> str:
        """A publishable key for `agent_a` (the end-user routes only; 401 everywhere else)."""
        _key, plaintext = key_create(project=self.project_a, kind="publishable", agent_id=self.agent_a.id)
        return plaintext


@pytest.fixture
def cast(db) -> Cast:
    project_a = project_create(name="Alpha")
    project_b = project_create(name="Bravo")
    _, key_a = key_create(project=project_a, kind="project", name="a")
    _, key_b = key_create(project=project_b, kind="project", name="b")
    users = get_user_model()
    staff = users.objects.create_user("staff", password="staff-pass-123", is_staff=True)
    user = users.objects.create_user("visitor", password="visitor-pass-123", is_staff=False)
    # The cast's staff account administers both projects (console access is per membership).
    project_a.members.add(staff)
    project_b.members.add(staff)
    return Cast(project_a, key_a, project_b, key_b, staff, user)


@pytest.fixture(scope="session")
def live_server_proc():
    """A real uvicorn Threadless server with its own database (shared by the session)."""
    server = ThreadlessServer().start()
    yield server
    server.stop()


@pytest.fixture
def live_worker_server():
    """A fresh server plus a real Celery worker on the configured broker."""
    server = ThreadlessServer(worker=True).start()
    yield server
    server.stop()


@pytest.fixture
def eager_celery():
    """A queued job runs in this process at once, so what it does is observable directly."""
    from threadless_site.celery import app

    old = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = old


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def attacker():
    """A listener on 127.0.0.2 standing in for an attacker's host (harness.attacker)."""
    from harness.attacker import AttackerListener

    listener = AttackerListener()
    yield listener
    listener.close()


@pytest.fixture(autouse=True)
def _lexical_recall_unless_asked(settings):
    """In-process tests recall lexically (`off`) unless they choose a provider: the default
    (`local`, tests/memories/test_embeddings.py) would embed every stored message of every
    test. Servers started as subprocesses keep the real default."""
    settings.THREADLESS_EMBEDDINGS = "off"


@pytest.fixture(autouse=True)
def _fresh_egress_caches():
    """Each test reads the runtime egress allow list and judges hosts afresh (within a process
    they are kept a few seconds, longer than one test; a test's database is rolled back)."""
    egress_caches_forget()
    yield
    egress_caches_forget()
