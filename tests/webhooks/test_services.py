"""Delivery to a real local receiver: the Standard Webhooks signature as the library's own verifier
checks it, retries (5xx yes, other 4xx no), the egress policy, secret rotation, the rule that
disables an endpoint failing for a day, and events that wait out a broker outage."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from memories import services as memory_services
from webhooks import selectors, services
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint


def _due_now() -> None:
    """Time passes: every waiting retry is due."""
    past = timezone.now() - timedelta(minutes=1)
    WebhookDelivery.objects.filter(state="pending").update(next_attempt_at=past)


def test_a_fact_event_verifies_with_the_librarys_own_verifier(
    cast, receiver, endpoint, eager_celery, django_capture_on_commit_callbacks
):
    _, secret = endpoint
    _, texts_secret = services.endpoint_create(
        project=cast.project_a, url=receiver.url + "?texts", events=["fact.created"], include_text=True
    )
    memory, _ = memory_services.memory_create(project=cast.project_a, external_id="ann")
    with django_capture_on_commit_callbacks(execute=True):
        fact, _ = memory_services.fact_create(memory=memory, text="Ann lives in Lisbon.")
    assert len(receiver.requests) == 2  # one event, one broker message, a delivery per endpoint
    headers, body = next(r for r in receiver.requests if "Lisbon" not in r[1].decode())
    with_text = next(r for r in receiver.requests if "Lisbon" in r[1].decode())
    assert Webhook(texts_secret).verify(with_text[1], with_text[0])["data"]["text"] == "Ann lives in Lisbon."
    event = Webhook(secret).verify(body, headers)
    assert headers["webhook-id"] == event["id"] and event["id"].startswith("evt_")
    assert event["type"] == "fact.created" and event["project_id"] == cast.project_a.pk
    assert event["data"] == {
        "memory_id": memory.pk,
        "external_id": "ann",
        "fact_id": fact.pk,
        "slot": None,
        "extractor": "api",
    }  # no fact text: the endpoint did not opt in
    with pytest.raises(WebhookVerificationError):
        Webhook(services.secret_new()).verify(body, headers)


def test_a_500_then_a_200_delivers_the_same_event_twice_and_logs_both(
    cast, receiver, endpoint, eager_celery, django_capture_on_commit_callbacks, caplog
):
    caplog.set_level("DEBUG")
    receiver.statuses.extend([500, 200])
    memory, _ = memory_services.memory_create(project=cast.project_a, external_id="bob")
    with django_capture_on_commit_callbacks(execute=True):
        memory_services.memory_delete(memory=memory)
    delivery = WebhookDelivery.objects.get()
    assert delivery.state == "pending" and delivery.next_attempt_at > timezone.now()
    assert services.deliveries_sweep() == 0  # not due yet
    _due_now()
    assert services.deliveries_sweep() == 1
    delivery.refresh_from_db()
    assert delivery.state == "delivered"
    (h1, b1), (h2, b2) = receiver.requests
    assert h1["webhook-id"] == h2["webhook-id"] == delivery.event_id and b1 == b2
    event = json.loads(b2)
    assert event["type"] == "memory.deleted" and event["data"]["deleted"]["memories"] == 1
    log = list(selectors.attempt_log(endpoint=endpoint[0]))
    assert [(a.number, a.status, a.outcome) for a in log] == [(2, 200, "delivered"), (1, 500, "retrying")]
    assert "sk-live" not in log[1].response_head and "[redacted" in log[1].response_head.lower()
    secret = endpoint[1]
    assert "webhook memory.deleted" in caplog.text and secret not in caplog.text
    assert all(secret[6:] not in (a.response_head + a.error) for a in log)


def test_a_400_is_not_retried(cast, receiver, endpoint, eager_celery, django_capture_on_commit_callbacks):
    receiver.statuses.append(400)
    with django_capture_on_commit_callbacks(execute=True):
        services.endpoint_test(endpoint=endpoint[0])
    assert WebhookDelivery.objects.get().state == "failed"
    _due_now()
    assert services.deliveries_sweep() == 0
    assert len(receiver.requests) == 1


def test_an_endpoint_on_a_refused_address_is_never_contacted(
    cast, receiver, endpoint, eager_celery, settings, django_capture_on_commit_callbacks
):
    settings.THREADLESS_EGRESS_ALLOW = []
    with pytest.raises(Exception, match="url: egress to 127.0.0.1 is not allowed"):
        services.endpoint_create(project=cast.project_a, url=receiver.url, events=["fact.created"])
    # Saved while the address was allowed, then refused: the send is refused, nothing reaches it.
    with django_capture_on_commit_callbacks(execute=True):
        services.endpoint_test(endpoint=endpoint[0])
    assert receiver.requests == []
    attempt = WebhookAttempt.objects.get()
    assert attempt.outcome == "failed" and attempt.status is None and "not allowed" in attempt.error


def test_a_rotated_secret_and_the_previous_one_both_verify_until_the_grace_ends(
    cast, receiver, endpoint, eager_celery, django_capture_on_commit_callbacks
):
    ep, old = endpoint
    new = services.endpoint_rotate(endpoint=ep)
    assert new != old and new.startswith("whsec_")
    with django_capture_on_commit_callbacks(execute=True):
        services.endpoint_test(endpoint=ep)
    headers, body = receiver.requests[-1]
    Webhook(old).verify(body, headers)
    Webhook(new).verify(body, headers)
    WebhookEndpoint.objects.filter(pk=ep.pk).update(previous_expires_at=timezone.now() - timedelta(seconds=1))
    with django_capture_on_commit_callbacks(execute=True):
        services.endpoint_test(endpoint=WebhookEndpoint.objects.get(pk=ep.pk))
    headers, body = receiver.requests[-1]
    Webhook(new).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(old).verify(body, headers)


def test_an_endpoint_failing_for_a_day_is_disabled_with_its_reason(
    cast, receiver, endpoint, eager_celery, django_capture_on_commit_callbacks
):
    ep = endpoint[0]
    WebhookEndpoint.objects.filter(pk=ep.pk).update(failing_since=timezone.now() - timedelta(hours=25))
    receiver.statuses.append(503)
    with django_capture_on_commit_callbacks(execute=True):
        services.endpoint_test(endpoint=ep)
    ep.refresh_from_db()
    assert not ep.enabled and "HTTP 503" in ep.disabled_reason
    assert list(selectors.endpoints_disabled(projects=[cast.project_a])) == [ep]
    _due_now()
    assert services.deliveries_sweep() == 0  # a disabled endpoint gets no automatic retries
    services.endpoint_update(endpoint=ep, enabled=True)
    ep.refresh_from_db()
    assert ep.enabled and ep.disabled_reason == "" and ep.failing_since is None


def test_signing_secrets_follow_a_store_key_rotation_and_an_unopenable_one_sends_nothing(
    cast, receiver, settings, eager_celery, django_capture_on_commit_callbacks
):
    from cryptography.fernet import Fernet
    from django.core.management import call_command

    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.THREADLESS_SECRET_STORE_KEYS = [old]
    ep, first = services.endpoint_create(project=cast.project_a, url=receiver.url, events=["fact.created"])
    second = services.endpoint_rotate(endpoint=ep)
    settings.THREADLESS_SECRET_STORE_KEYS = [new, old]
    call_command("rotate_webhook_secrets")
    settings.THREADLESS_SECRET_STORE_KEYS = [new]  # the old key is gone now
    ep.refresh_from_db()
    assert services.endpoint_secrets(ep) == [second, first]
    settings.THREADLESS_SECRET_STORE_KEYS = [Fernet.generate_key().decode()]  # a key was dropped too early
    with django_capture_on_commit_callbacks(execute=True):
        services.endpoint_test(endpoint=ep)
    assert receiver.requests == []
    assert "cannot be decrypted" in WebhookAttempt.objects.get().error


def test_an_event_whose_publish_the_broker_refused_is_delivered_by_the_sweep(
    cast, receiver, endpoint, eager_celery, monkeypatch, django_capture_on_commit_callbacks
):
    from webhooks import queue

    sent = queue.send

    def broker_down(*args, **kwargs):
        raise ConnectionRefusedError("broker down")

    monkeypatch.setattr(queue, "send", broker_down)
    memory, _ = memory_services.memory_create(project=cast.project_a)
    with django_capture_on_commit_callbacks(execute=True):
        memory_services.fact_create(memory=memory, text="I have a beagle.")
    assert receiver.requests == [] and WebhookDelivery.objects.get().state == "pending"
    monkeypatch.setattr(queue, "send", sent)  # the broker is back
    _due_now()
    assert services.deliveries_sweep() == 1
    assert WebhookDelivery.objects.get().state == "delivered" and len(receiver.requests) == 1


def test_a_report_made_while_the_broker_refuses_publishes_has_its_events_delivered_once_it_returns(
    cast, receiver, endpoint, eager_celery, monkeypatch, django_capture_on_commit_callbacks
):
    """The report's job and its digest's delivery both wait for the broker; when it is back, the
    outbox sweep runs the job (`fact.created`, `memory.processed`) and the delivery sweep sends the
    digest."""
    from memories import queue as memory_queue
    from memories.models import Outbox
    from webhooks import queue

    sent = memory_queue.send, queue.send

    def broker_down(*args, **kwargs):
        raise ConnectionRefusedError("broker down")

    monkeypatch.setattr(memory_queue, "send", broker_down)
    monkeypatch.setattr(queue, "send", broker_down)
    memory, _ = memory_services.memory_create(
        project=cast.project_a, policy={"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}}
    )
    with django_capture_on_commit_callbacks(execute=True):
        memory_services.memory_decorate(
            memory=memory, messages=[{"role": "user", "content": "I live in Lisbon."}]
        )
        memory_services.report_accept(
            memory=memory,
            messages=[{"role": "assistant", "content": "Nice."}],
            failures=[{"task_id": "weather", "error": "HTTP 503", "output": None, "has_output": False}],
        )
    assert receiver.requests == [] and Outbox.objects.filter(processed_at=None).count() == 1
    monkeypatch.setattr(memory_queue, "send", sent[0])  # the broker is back
    monkeypatch.setattr(queue, "send", sent[1])
    Outbox.objects.update(created_at=timezone.now() - timedelta(minutes=2))
    _due_now()
    with django_capture_on_commit_callbacks(execute=True):
        assert memory_services.outbox_sweep() == 1
    assert services.deliveries_sweep() == 1
    events = [json.loads(body) for _headers, body in receiver.requests]
    assert sorted(e["type"] for e in events) == ["digest.created", "fact.created", "memory.processed"]
    assert {e["data"]["memory_id"] for e in events} == {memory.pk}
