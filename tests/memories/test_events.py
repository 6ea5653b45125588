"""What the memory core tells webhooks: each change's event, queued in the change's transaction and
delivered (to a real local receiver) once it commits; text only for an endpoint that opted in."""

from __future__ import annotations

import json

from django.db import transaction

from memories import services
from tests.webhooks.conftest import Receiver
from webhooks import services as webhook_services
from webhooks.events import EVENT_TYPES
from webhooks.models import WebhookDelivery

POLICY = {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}}


def _events(receiver: Receiver) -> list[dict]:
    return [json.loads(body) for _headers, body in receiver.requests]


def test_a_report_its_background_work_a_failure_and_a_thread_delete_each_send_their_event(
    cast, settings, eager_celery, django_capture_on_commit_callbacks
):
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1"]
    receiver = Receiver()
    try:
        webhook_services.endpoint_create(
            project=cast.project_a, url=receiver.url, events=list(EVENT_TYPES), include_text=True
        )
        memory, _ = services.memory_create(project=cast.project_a, external_id="dana", policy=POLICY)
        with django_capture_on_commit_callbacks(execute=True):
            services.memory_decorate(
                memory=memory, messages=[{"role": "user", "content": "I live in Lisbon."}], thread="trip"
            )
            services.report_accept(
                memory=memory,
                messages=[{"role": "assistant", "content": "Nice."}],
                failures=[{"task_id": "weather", "error": "HTTP 503", "output": None, "has_output": False}],
                thread="trip",
            )
        by_type = {e["type"]: e for e in _events(receiver)}
        assert set(by_type) == {"digest.created", "fact.created", "memory.processed"}
        assert "Lisbon" in by_type["fact.created"]["data"]["text"]  # the endpoint opted in
        digest = by_type["digest.created"]["data"]
        assert digest["thread"] == "trip" and digest["task_id"] == "weather" and "weather" in digest["text"]
        assert all(e["data"]["external_id"] == "dana" for e in by_type.values())
        with django_capture_on_commit_callbacks(execute=True):
            services.thread_delete(memory=memory, name="trip")
        deleted = _events(receiver)[-1]
        assert deleted["type"] == "thread.deleted" and deleted["data"]["deleted"]["facts"] == 1
    finally:
        receiver.close()


def test_a_change_rolled_back_queues_no_event(cast, settings):
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1"]
    webhook_services.endpoint_create(
        project=cast.project_a, url="http://127.0.0.1:9/x", events=["fact.created"]
    )
    memory, _ = services.memory_create(project=cast.project_a)
    try:
        with transaction.atomic():
            services.fact_create(memory=memory, text="I have a beagle.")
            assert WebhookDelivery.objects.count() == 1
            raise RuntimeError
    except RuntimeError:
        pass
    assert WebhookDelivery.objects.count() == 0
