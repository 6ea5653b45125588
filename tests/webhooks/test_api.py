"""/v1/webhooks: the secret shown once, the access set (401, another project's ids 404, 400 naming
the field; a URL the egress policy refuses, in the console too), the delivery log and "send again"
over the API."""

from __future__ import annotations

from django.test import Client
from django.utils.html import escape
from standardwebhooks import Webhook

from providers.egress import EGRESS_HINT
from tests.fixtures.api import error_of
from webhooks.models import WebhookEndpoint


def test_create_shows_the_secret_once_and_reads_never_do(cast, receiver):
    created = cast.a.post(
        "/v1/webhooks", {"url": receiver.url, "events": ["fact.created", "memory.deleted"]}, format="json"
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["secret"].startswith("whsec_") and body["enabled"] is True and body["include_text"] is False
    listed = cast.a.get("/v1/webhooks").json()["data"]
    assert [e["id"] for e in listed] == [body["id"]]
    one = cast.a.get(f"/v1/webhooks/{body['id']}")
    assert body["secret"] not in one.content.decode() and "secret" not in one.json()
    assert body["secret"] not in cast.a.get("/v1/webhooks").content.decode()


def test_the_access_set(cast, receiver, endpoint):
    ep = endpoint[0]
    error_of(cast.anon.get("/v1/webhooks"), 401, "unauthorized")
    for method, path in [
        ("get", f"/v1/webhooks/{ep.pk}"),
        ("patch", f"/v1/webhooks/{ep.pk}"),
        ("delete", f"/v1/webhooks/{ep.pk}"),
        ("post", f"/v1/webhooks/{ep.pk}/rotate"),
        ("post", f"/v1/webhooks/{ep.pk}/test"),
        ("get", f"/v1/webhooks/{ep.pk}/deliveries"),
        ("post", f"/v1/webhooks/{ep.pk}/deliveries/dlv_nope/retry"),
    ]:
        error_of(getattr(cast.b, method)(path, {"enabled": False}, format="json"), 404, "not_found")
    assert cast.b.get("/v1/webhooks").json()["data"] == []
    bad = error_of(
        cast.a.post("/v1/webhooks", {"url": receiver.url, "events": ["fact.eaten"]}, format="json"),
        400,
        "invalid_request",
    )
    assert bad["message"].startswith("events[0]")
    patched = cast.a.patch(f"/v1/webhooks/{ep.pk}", {"url": "ftp://example.com/x"}, format="json")
    bad = error_of(patched, 400, "invalid_request")
    assert bad["message"].startswith("url:")


def test_the_delivery_log_and_send_again(
    cast, receiver, endpoint, eager_celery, django_capture_on_commit_callbacks
):
    ep, secret = endpoint
    receiver.statuses.append(404)
    with django_capture_on_commit_callbacks(execute=True):
        queued = cast.a.post(f"/v1/webhooks/{ep.pk}/test")
    assert queued.status_code == 202
    delivery_id = queued.json()["delivery_id"]
    log = cast.a.get(f"/v1/webhooks/{ep.pk}/deliveries").json()["data"]
    assert [(a["type"], a["status"], a["outcome"], a["attempt"]) for a in log] == [
        ("webhook.test", 404, "failed", 1)
    ]
    assert log[0]["event_id"] == queued.json()["event_id"] and "sk-live" not in log[0]["response"]
    with django_capture_on_commit_callbacks(execute=True):
        again = cast.a.post(f"/v1/webhooks/{ep.pk}/deliveries/{delivery_id}/retry")
    assert again.status_code == 202
    log = cast.a.get(f"/v1/webhooks/{ep.pk}/deliveries").json()["data"]
    assert [(a["status"], a["outcome"]) for a in log] == [(200, "delivered"), (404, "failed")]
    headers, body = receiver.requests[-1]
    assert Webhook(secret).verify(body, headers)["type"] == "webhook.test"
    assert receiver.requests[0][0]["webhook-id"] == headers["webhook-id"]


def test_a_url_the_egress_policy_refuses_is_a_400_naming_url_with_the_proxys_hint(
    cast, receiver, endpoint, settings
):
    settings.THREADLESS_EGRESS_ALLOW = []
    ep = endpoint[0]
    refusal = "url: egress to 127.0.0.1 is not allowed; to allow it, an operator adds 127.0.0.1"
    for answer in (
        cast.a.post("/v1/webhooks", {"url": receiver.url, "events": ["fact.created"]}, format="json"),
        cast.a.patch(f"/v1/webhooks/{ep.pk}", {"url": "http://127.0.0.1:8/x"}, format="json"),
    ):
        bad = error_of(answer, 400, "invalid_request")
        assert bad["message"].startswith(refusal) and bad["hint"] == EGRESS_HINT
    staff = Client()
    staff.force_login(cast.staff)
    page = staff.post(
        "/manage/webhooks/", {"project": cast.project_a.pk, "url": receiver.url, "events": ["fact.created"]}
    )
    assert page.status_code == 400
    assert refusal in page.content.decode() and escape(EGRESS_HINT) in page.content.decode()
    # A name is judged when it is called, not resolved when it is saved.
    named = cast.a.patch(f"/v1/webhooks/{ep.pk}", {"url": "http://hooks.internal.test/x"}, format="json")
    assert named.status_code == 200, named.content
    assert list(WebhookEndpoint.objects.values_list("url", flat=True)) == ["http://hooks.internal.test/x"]
