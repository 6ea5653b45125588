"""Manager console pages for webhooks: a project's endpoints (add one, its secret shown once), and
one endpoint's settings, secret rotation, test event and delivery log with "send again".

Writes go through `webhooks.services`; every endpoint is read among the user's visible projects,
so another project's id is a 404. The delivery log is a partial that htmx refreshes in place.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from common.errors import ApiError, NotFound
from console import access
from console.access import staff_required
from webhooks import selectors, services
from webhooks.events import EVENT_TYPES
from webhooks.models import WebhookEndpoint

LOG_ROWS = 50


class EndpointForm(forms.Form):
    url = forms.CharField(
        label="Endpoint URL",
        max_length=2000,
        help_text="Where events are POSTed: http:// or https://; a private address needs "
        "THREADLESS_EGRESS_ALLOW.",
    )
    events = forms.MultipleChoiceField(
        label="Events",
        choices=[(name, name) for name in EVENT_TYPES],
        widget=forms.CheckboxSelectMultiple,
    )
    include_text = forms.BooleanField(label="Include message and fact text in events", required=False)
    enabled = forms.BooleanField(label="Enabled", required=False, initial=True)


def _endpoint(request, endpoint_id: str) -> WebhookEndpoint:
    try:
        return selectors.endpoint_within(
            projects=access.visible_projects(request.user), endpoint_id=endpoint_id
        )
    except NotFound:
        raise Http404("No such webhook endpoint.")


def _save_errors(form: EndpointForm, exc: ApiError) -> None:
    field = exc.message.split(":", 1)[0].split("[", 1)[0]
    text = exc.message if exc.hint == ApiError.hint else f"{exc.message} {exc.hint}"
    form.add_error(field if field in form.fields else None, text)


@staff_required
def endpoint_list(request):
    projects = list(access.visible_projects(request.user).order_by("name"))
    chosen = request.POST.get("project") or request.GET.get("project")
    project = access.project_for(request.user, chosen) if chosen else (projects[0] if projects else None)
    form = EndpointForm(request.POST if request.method == "POST" else None, initial={"enabled": True})
    created, secret, status = None, None, 200
    if request.method == "POST" and project is not None:
        if form.is_valid():
            try:
                created, secret = services.endpoint_create(project=project, **form.cleaned_data)
            except ApiError as exc:
                _save_errors(form, exc)
            else:
                form = EndpointForm(initial={"enabled": True})
        status = 201 if created else 400
    return render(
        request,
        "webhooks_console/endpoints.html",
        {
            "section": "webhooks",
            "projects": projects,
            "project": project,
            "endpoints": selectors.endpoint_list(project=project) if project else [],
            "form": form,
            "created": created,
            "secret": secret,
            "event_types": EVENT_TYPES,
        },
        status=status,
    )


@staff_required
@vary_on_headers("HX-Request")
def endpoint_detail(request, endpoint_id: str):
    endpoint = _endpoint(request, endpoint_id)
    initial = {
        "url": endpoint.url,
        "events": endpoint.events,
        "include_text": endpoint.include_text,
        "enabled": endpoint.enabled,
    }
    form = EndpointForm(request.POST if request.method == "POST" else None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.endpoint_update(endpoint=endpoint, **form.cleaned_data)
        except ApiError as exc:
            _save_errors(form, exc)
        else:
            messages.success(request, "Webhook endpoint saved.")
            return redirect("webhooks_console:endpoint", endpoint_id=endpoint.pk)
    return _detail(request, endpoint, form=form, status=400 if form.errors else 200)


def _detail(request, endpoint: WebhookEndpoint, *, form=None, secret: str | None = None, status: int = 200):
    log = list(selectors.attempt_log(endpoint=endpoint)[:LOG_ROWS])
    template = "webhooks_console/endpoint.html"
    return render(
        request,
        f"{template}#log" if request.htmx and request.method == "GET" else template,
        {
            "section": "webhooks",
            "endpoint": endpoint,
            "project": endpoint.project,
            "form": form
            or EndpointForm(
                initial={
                    "url": endpoint.url,
                    "events": endpoint.events,
                    "include_text": endpoint.include_text,
                    "enabled": endpoint.enabled,
                }
            ),
            "secret": secret,
            "log": log,
        },
        status=status,
    )


@staff_required
@require_POST
def endpoint_rotate(request, endpoint_id: str):
    endpoint = _endpoint(request, endpoint_id)
    secret = services.endpoint_rotate(endpoint=endpoint)
    return _detail(request, endpoint, secret=secret)


@staff_required
@require_POST
def endpoint_test(request, endpoint_id: str):
    endpoint = _endpoint(request, endpoint_id)
    delivery = services.endpoint_test(endpoint=endpoint)
    messages.success(request, f"Test event {delivery.event_id} queued; its attempt shows in the log below.")
    return redirect(reverse("webhooks_console:endpoint", args=[endpoint.pk]) + "#log")


@staff_required
@require_POST
def endpoint_delete(request, endpoint_id: str):
    endpoint = _endpoint(request, endpoint_id)
    project_id = endpoint.project_id
    services.endpoint_delete(endpoint=endpoint)
    messages.success(request, "Webhook endpoint deleted.")
    return redirect(reverse("webhooks_console:endpoints") + f"?project={project_id}")


@staff_required
@require_POST
def delivery_retry(request, endpoint_id: str, delivery_id: str):
    endpoint = _endpoint(request, endpoint_id)
    try:
        delivery = selectors.delivery_get(endpoint=endpoint, delivery_id=delivery_id)
    except NotFound:
        raise Http404("No such delivery.")
    services.delivery_resend(delivery=delivery)
    messages.success(request, f"Event {delivery.event_id} queued to be sent again.")
    return redirect(reverse("webhooks_console:endpoint", args=[endpoint.pk]) + "#log")
