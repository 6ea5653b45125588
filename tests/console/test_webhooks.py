"""The webhooks console pages: the secret shown once, CSRF, escaping, send again, and an endpoint
disabled by a day of failures shown with its reason on the Overview."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from webhooks import services
from webhooks.models import WebhookAttempt, WebhookEndpoint


@pytest.fixture(autouse=True)
def _loopback_egress(settings):
    settings.THREADLESS_EGRESS_ALLOW = ["127.0.0.1"]


def test_adding_an_endpoint_shows_its_secret_once_and_escapes_the_url(cast, staff_client):
    url = "http://127.0.0.1:9/<script>alert(1)</script>"
    response = staff_client.post(
        "/manage/webhooks/",
        {
            "project": cast.project_a.pk,
            "url": url,
            "events": ["fact.created", "memory.deleted"],
            "enabled": "on",
        },
    )
    assert response.status_code == 201
    html = response.content.decode()
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.events == ["fact.created", "memory.deleted"] and endpoint.enabled
    secret = html.split('id="new-secret" readonly value="')[1].split('"')[0]
    assert secret.startswith("whsec_") and services.endpoint_secrets(endpoint) == [secret]
    for page in ("/manage/webhooks/", f"/manage/webhooks/{endpoint.pk}/"):
        shown = staff_client.get(page, {"project": cast.project_a.pk})
        assert shown.status_code == 200 and secret not in shown.content.decode()


def test_console_writes_need_the_csrf_token_and_staff(cast, user_client):
    endpoint, _ = services.endpoint_create(
        project=cast.project_a, url="http://127.0.0.1:9/x", events=["fact.created"]
    )
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(cast.staff)
    assert strict.post(f"/manage/webhooks/{endpoint.pk}/delete/").status_code == 403
    assert user_client.post(f"/manage/webhooks/{endpoint.pk}/delete/").status_code == 403
    assert WebhookEndpoint.objects.filter(pk=endpoint.pk).exists()


def test_a_disabled_endpoint_shows_why_on_the_overview_and_send_again_works(
    cast, staff_client, eager_celery, django_capture_on_commit_callbacks
):
    endpoint, _ = services.endpoint_create(
        project=cast.project_a, url="http://127.0.0.1:9/x", events=["fact.created"]
    )
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(failing_since=timezone.now() - timedelta(days=2))
    with django_capture_on_commit_callbacks(execute=True):
        delivery = services.endpoint_test(endpoint=endpoint)  # port 9: connection refused
    overview = staff_client.get("/manage/", {"project": cast.project_a.pk}).content.decode()
    assert "Webhook endpoints disabled" in overview and "connection refused" in overview
    with django_capture_on_commit_callbacks(execute=True):
        again = staff_client.post(f"/manage/webhooks/{endpoint.pk}/deliveries/{delivery.pk}/retry/")
    assert again.status_code == 302
    assert WebhookAttempt.objects.filter(delivery=delivery).count() == 2
    log = staff_client.get(f"/manage/webhooks/{endpoint.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert log.count("Send again") == 2 and "<html" not in log
