"""Webhook endpoints (create, change, rotate the secret, delete), events (`event_emit`, called in
the transaction of the change it tells about) and their delivery.

Delivery: the Standard Webhooks headers (webhooks.signing), POSTed through the egress policy's
pinned client (providers.base.http_client: checked addresses, no redirects, no proxies), a short
timeout and a bounded read of the answer's first bytes. At least once: a delivery is retried with
backoff (webhooks.schedule) on network errors, timeouts, 408, 429 and 5xx, never on another status;
each attempt is logged (status, latency, the answer's first bytes, redacted). Nothing here writes
a signing secret to a log, an error or the delivery log.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from common.errors import InvalidRequest
from common.ids import make_id
from common.redaction import cut, redact_query_values, redact_secrets
from projects import secretbox
from providers.base import http_client, transport_error
from providers.bounded import read_head
from providers.egress import EGRESS_HINT, EgressRefused, egress_refusal, url_check
from webhooks import queue
from webhooks.events import EVENT_TYPES, TEST_EVENT, event_body
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint
from webhooks.schedule import RETRIES, Retries
from webhooks.signing import secret_new, signed_headers

log = logging.getLogger("threadless.webhooks")

MAX_ENDPOINTS = 10  # per project
ROTATION_GRACE = timedelta(hours=24)  # the previous secret still signs this long after a rotation
HEAD_CHARS = 200  # of an answer, kept in the log (redacted)
CLAIM_SECONDS = 60  # a claim older than this belongs to a worker that died mid-send
SWEEP_BATCH = 500
PUBLISH_BATCH = 20  # deliveries a task sends one after another (MAX_ENDPOINTS: an event fits in one)
LOG_DAYS = 14  # finished deliveries (and their attempts) are kept this long
USER_AGENT = "Threadless-Webhooks/1"
UNSIGNABLE = (
    "the signing secret cannot be decrypted with THREADLESS_SECRET_STORE_KEYS "
    "(run manage.py rotate_webhook_secrets before dropping a key; rotate the endpoint's secret now)"
)


# --- endpoints ----------------------------------------------------------------------------------


def _url_form_refusal(url: Any) -> str | None:
    """Why `url` is not an http(s) URL without credentials that an endpoint can have, or None."""
    if not isinstance(url, str) or not url or len(url) > 2000:
        return "must be an http:// or https:// URL of at most 2,000 characters."
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        return "must not contain spaces or control characters."
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http:// or https:// URL."
    if "@" in parts.netloc:
        return "must not contain user info (user:password@)."
    try:
        _ = parts.port  # a port out of range or not a number raises
    except ValueError:
        return "must have a port from 0 to 65535."
    return None


def _url_checked(url: Any) -> str:
    """`url` if an endpoint may have it. The egress policy judges it as saved only where no DNS
    answer is needed (`egress_refusal`: an address, localhost): a name is judged at every send,
    resolved and pinned, so a save tells nothing of what a name resolves to."""
    refusal = _url_form_refusal(url)
    if refusal:
        raise InvalidRequest(f"url: {refusal}")
    refusal = egress_refusal(url)
    if refusal:
        raise InvalidRequest(f"url: {refusal}", hint=EGRESS_HINT)
    return url


def _events_checked(events: Any) -> list[str]:
    if not isinstance(events, list) or not events:
        raise InvalidRequest("events: a non-empty list of event types.", hint=", ".join(EVENT_TYPES))
    for i, name in enumerate(events):
        if name not in EVENT_TYPES:
            raise InvalidRequest(f"events[{i}]: not an event type.", hint=", ".join(EVENT_TYPES))
    return list(dict.fromkeys(events))


def endpoint_create(
    *, project, url: str, events: list[str], enabled: bool = True, include_text: bool = False
) -> tuple[WebhookEndpoint, str]:
    """A new endpoint and its signing secret (`whsec_…`), which is never shown again."""
    if WebhookEndpoint.objects.filter(project=project).count() >= MAX_ENDPOINTS:
        raise InvalidRequest(f"A project has at most {MAX_ENDPOINTS} webhook endpoints.")
    secret = secret_new()
    endpoint = WebhookEndpoint.objects.create(
        project=project,
        url=_url_checked(url),
        events=_events_checked(events),
        enabled=bool(enabled),
        include_text=bool(include_text),
        secret=secretbox.encrypt(secret),
    )
    return endpoint, secret


def endpoint_update(
    *,
    endpoint: WebhookEndpoint,
    url: str | None = None,
    events: list[str] | None = None,
    enabled: bool | None = None,
    include_text: bool | None = None,
) -> WebhookEndpoint:
    """Change what is given. Enabling an endpoint clears why it was disabled and its failures."""
    if url is not None:
        endpoint.url = _url_checked(url)
    if events is not None:
        endpoint.events = _events_checked(events)
    if include_text is not None:
        endpoint.include_text = bool(include_text)
    if enabled is not None:
        if enabled and not endpoint.enabled:
            endpoint.disabled_reason, endpoint.disabled_at, endpoint.failing_since = "", None, None
        endpoint.enabled = bool(enabled)
    endpoint.save()
    return endpoint


def endpoint_delete(*, endpoint: WebhookEndpoint) -> None:
    endpoint.delete()


def endpoint_rotate(*, endpoint: WebhookEndpoint, grace: timedelta = ROTATION_GRACE) -> str:
    """A new signing secret; the current one keeps signing (beside it) for `grace`."""
    secret = secret_new()
    endpoint.previous_secret = endpoint.secret
    endpoint.previous_expires_at = timezone.now() + grace
    endpoint.secret = secretbox.encrypt(secret)
    endpoint.save(update_fields=["secret", "previous_secret", "previous_expires_at", "updated_at"])
    return secret


def endpoint_secrets(endpoint: WebhookEndpoint) -> list[str]:
    """The secrets a delivery is signed with now: the current one, and the previous one during
    its grace period."""
    found = [secretbox.decrypt(endpoint.secret)]
    if (
        endpoint.previous_secret
        and endpoint.previous_expires_at
        and endpoint.previous_expires_at > timezone.now()
    ):
        found.append(secretbox.decrypt(endpoint.previous_secret))
    return found


def secrets_reencrypt() -> tuple[int, list[str]]:
    """Every endpoint's secrets encrypted again with the newest secret-store key: (endpoints
    done, ids of those no configured key opens, left unchanged)."""
    done, failed = 0, []
    with transaction.atomic():
        for endpoint in WebhookEndpoint.objects.select_for_update().order_by("pk"):
            try:
                endpoint.secret = secretbox.rotate(endpoint.secret)
                if endpoint.previous_secret:
                    endpoint.previous_secret = secretbox.rotate(endpoint.previous_secret)
            except secretbox.InvalidToken:
                failed.append(endpoint.pk)
                continue
            WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
                secret=endpoint.secret, previous_secret=endpoint.previous_secret
            )
            done += 1
    return done, failed


# --- events -------------------------------------------------------------------------------------


def event_emit(
    *,
    endpoints: list[WebhookEndpoint],
    type: str,
    project_id: str,
    data: dict,
    text: dict | None = None,
) -> str:
    """Queue an event for these endpoints (webhooks.selectors.endpoints_for) in the caller's
    transaction: one delivery row each, handed to the broker once it commits (a broker outage
    delays them until the sweep; it loses none). `text`: message or fact text, added to `data`
    only for endpoints that opted in. Returns the event's id."""
    event_id, at = make_id("evt_", 24), timezone.now()
    rows = [
        WebhookDelivery(
            endpoint_id=endpoint.pk,
            event_id=event_id,
            type=type,
            body=event_body(
                event_id=event_id,
                type=type,
                at=at,
                project_id=project_id,
                data=data,
                text=text,
                include_text=endpoint.include_text,
            ).decode(),
            next_attempt_at=at,
        )
        for endpoint in endpoints
    ]
    WebhookDelivery.objects.bulk_create(rows)
    _publish_on_commit([row.pk for row in rows])
    return event_id


def endpoint_test(*, endpoint: WebhookEndpoint) -> WebhookDelivery:
    """Send `webhook.test` to this endpoint now (also when it is disabled: a person asked)."""
    event_id, at = make_id("evt_", 24), timezone.now()
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint,
        event_id=event_id,
        type=TEST_EVENT,
        body=event_body(
            event_id=event_id,
            type=TEST_EVENT,
            at=at,
            project_id=endpoint.project_id,
            data={"endpoint_id": endpoint.pk, "message": "A test event from Threadless."},
            text=None,
            include_text=False,
        ).decode(),
        next_attempt_at=at,
    )
    _publish_on_commit([delivery.pk], manual=True)
    return delivery


def delivery_resend(*, delivery: WebhookDelivery) -> WebhookDelivery:
    """Send a delivery again now, whatever became of it (the same event id and body): a person
    asked, so it goes to a disabled endpoint too; a failure is retried as usual."""
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        state=WebhookDelivery.State.PENDING,
        next_attempt_at=timezone.now(),
        claimed_at=None,
        first_attempt_at=None,
    )
    _publish_on_commit([delivery.pk], manual=True)
    delivery.refresh_from_db()
    return delivery


def _publish_on_commit(ids: list[str], *, manual: bool = False) -> None:
    if ids:
        transaction.on_commit(lambda: queue.submit(lambda: _publish(ids, manual=manual)))


def _publish(ids: list[str], *, manual: bool = False) -> None:
    """One broker message for an event's deliveries, whatever the number of endpoints; a sweep's
    rows go PUBLISH_BATCH a message, so one task's sends (each within the 5 s timeout) stay inside
    its time limit. After a commit this runs on the publisher's thread (queue.submit)."""
    for start in range(0, len(ids), PUBLISH_BATCH):
        batch = ids[start : start + PUBLISH_BATCH]
        try:
            queue.send(queue.DELIVER, delivery_id=batch if len(batch) > 1 else batch[0], manual=manual)
        except Exception as exc:  # noqa: BLE001 - any broker failure: the rows wait for the sweep
            log.warning(
                "deliveries %s not queued (%s); the sweep sends them", batch[:3], exc.__class__.__name__
            )


# --- delivery -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """What one POST came to: the status (None: no answer), latency, the answer's first bytes
    (redacted) or why nothing came back, and whether that is worth another try."""

    status: int | None
    latency_ms: int
    head: str = ""
    error: str = ""
    retryable: bool = False

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def _retryable_status(status: int) -> bool:
    return status in (408, 429) or status >= 500


def _post(endpoint: WebhookEndpoint, delivery: WebhookDelivery, retries: Retries) -> Answer:
    body = delivery.body.encode()
    started = time.monotonic()
    try:
        secrets_ = endpoint_secrets(endpoint)
    except secretbox.InvalidToken:  # nothing is sent unsigned
        return Answer(None, 0, error=UNSIGNABLE)
    headers = {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        **signed_headers(event_id=delivery.event_id, at=timezone.now(), body=body, secrets_=secrets_),
    }
    timeout = httpx.Timeout(retries.timeout_seconds)
    try:
        url_check(endpoint.url)
        with http_client().stream(
            "POST", endpoint.url, content=body, headers=headers, timeout=timeout
        ) as response:
            status = response.status_code
            raw = read_head(response, limit=HEAD_CHARS * 4)
    except EgressRefused as exc:  # the address is not ours to reach: no retry, and nothing was sent
        return Answer(None, _ms(started), error=str(exc))
    except Exception as exc:  # noqa: BLE001 - every transport failure is an attempt that got no answer
        reason = transport_error(exc, timeout_ms=int(retries.timeout_seconds * 1000), url=endpoint.url).reason
        return Answer(None, _ms(started), error=cut(reason, 400), retryable=True)
    head = redact_secrets(raw.decode("utf-8", "replace"), None)
    return Answer(status, _ms(started), head=cut(head, HEAD_CHARS), retryable=_retryable_status(status))


def _ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


def delivery_attempt(*, delivery_id: str, manual: bool = False, retries: Retries = RETRIES) -> str | None:
    """Claim and send one delivery, log the attempt and decide what follows: `delivered`,
    `retrying` (its next attempt scheduled) or `failed`. None when there was nothing to do
    (delivered already, not due yet, another worker has it, or its endpoint is disabled and no
    person asked). A failure that goes on for `retries.disable_after` disables the endpoint."""
    now = timezone.now()
    stale = now - timedelta(seconds=CLAIM_SECONDS)
    due = WebhookDelivery.objects.filter(
        pk=delivery_id, state=WebhookDelivery.State.PENDING, next_attempt_at__lte=now
    ).filter(Q(claimed_at=None) | Q(claimed_at__lt=stale))
    if not manual:
        due = due.filter(endpoint__enabled=True)
    if not due.update(claimed_at=now, attempts=F("attempts") + 1):
        return None
    delivery = WebhookDelivery.objects.select_related("endpoint").get(pk=delivery_id)
    endpoint = delivery.endpoint
    first = delivery.first_attempt_at or now
    answer = _post(endpoint, delivery, retries)
    done_at = timezone.now()
    if answer.delivered:
        outcome = WebhookDelivery.State.DELIVERED
    elif answer.retryable and (done_at - first).total_seconds() < retries.give_up_after:
        outcome = "retrying"
    else:
        outcome = WebhookDelivery.State.FAILED
    with transaction.atomic():
        WebhookAttempt.objects.create(
            delivery=delivery,
            endpoint=endpoint,
            number=delivery.attempts,
            at=now,
            status=answer.status,
            latency_ms=answer.latency_ms,
            response_head=answer.head,
            error=answer.error,
            outcome=outcome,
        )
        update: dict[str, Any] = {"claimed_at": None, "first_attempt_at": first}
        if outcome == "retrying":
            wait = timedelta(seconds=retries.delay(delivery.attempts))
            update["next_attempt_at"] = min(done_at + wait, first + timedelta(seconds=retries.give_up_after))
        else:
            update["state"] = outcome
        WebhookDelivery.objects.filter(pk=delivery.pk).update(**update)
        _endpoint_health(endpoint, answer, done_at, retries)
    log.info(
        "webhook %s %s to %s: %s (attempt %d, %s)",
        delivery.type,
        delivery.event_id,
        redact_query_values(endpoint.url),
        outcome,
        delivery.attempts,
        answer.status or answer.error,
    )
    return str(outcome)


def _endpoint_health(endpoint: WebhookEndpoint, answer: Answer, at, retries: Retries) -> None:
    """A success clears the endpoint's failures; a day of nothing but failures disables it."""
    rows = WebhookEndpoint.objects.filter(pk=endpoint.pk)
    if answer.delivered:
        if endpoint.failing_since is not None:
            rows.update(failing_since=None)
        return
    since = endpoint.failing_since
    if since is None:
        rows.filter(failing_since=None).update(failing_since=at)
        return
    if endpoint.enabled and (at - since).total_seconds() >= retries.disable_after:
        last = f"HTTP {answer.status}" if answer.status is not None else answer.error
        hours = round(retries.disable_after / 3600)
        reason = (
            f"Every delivery failed for {hours} hours (since {since:%Y-%m-%d %H:%M} UTC); the last: {last}"
        )
        if rows.filter(enabled=True).update(enabled=False, disabled_at=at, disabled_reason=cut(reason, 480)):
            log.warning("webhook endpoint %s disabled: %s", endpoint.pk, reason)


def deliveries_sweep() -> int:
    """Send the deliveries whose time has come: retries, and rows whose publish was lost (the
    broker was down, or the process ended first). A row just written is left to its own publish
    for a few seconds. Finished deliveries older than LOG_DAYS go, with their attempts. Returns
    how many were queued."""
    now = timezone.now()
    stale = now - timedelta(seconds=CLAIM_SECONDS)
    ids = list(
        WebhookDelivery.objects.filter(
            state=WebhookDelivery.State.PENDING,
            next_attempt_at__lte=now - timedelta(seconds=2),
            endpoint__enabled=True,
        )
        .filter(Q(claimed_at=None) | Q(claimed_at__lt=stale))
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:SWEEP_BATCH]
    )
    _publish(ids)
    WebhookDelivery.objects.filter(created_at__lt=now - timedelta(days=LOG_DAYS)).exclude(
        state=WebhookDelivery.State.PENDING
    ).delete()
    return len(ids)
