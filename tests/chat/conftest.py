from __future__ import annotations

import pytest

from chat import services
from projects.services import key_create
from tests.chat.stubs import Stub


@pytest.fixture(scope="module")
def stub():
    server = Stub()
    yield server
    server.close()


@pytest.fixture(autouse=True)
def _loopback_egress(settings):
    # The stubs listen on loopback, which the egress policy refuses unless allowed.
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1"]


@pytest.fixture
def make_agent(cast):
    def make(config: dict, name: str = "Agent", project=None):
        return services.agent_create(project=project or cast.project_a, name=name, config=config)

    return make


@pytest.fixture
def publishable(cast):
    def make(agent) -> str:
        _key, plaintext = key_create(project=agent.project, kind="publishable", agent_id=agent.id)
        return plaintext

    return make


def policy(mode: str | None, cont: bool = False) -> dict:
    if mode is None:
        return {}
    if mode == "off":
        return {"memoryPolicy": {"strictWriteDiscipline": {"enabled": False}}}
    return {
        "memoryPolicy": {
            "strictWriteDiscipline": {"enabled": True, "onFailure": mode, "continueOnFailure": cont}
        }
    }


@pytest.fixture
def eager_celery():
    """Background work (facts, recall) runs inline once its turn commits, so its effect is observable."""
    from threadless_site.celery import app

    old = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = old
