"""Manager console page for operators: the runtime egress allow list.

Outbound calls (http_call, llm `baseUrl`, background models, the proxy's upstreams) to addresses
that are not public are refused unless allowed. THREADLESS_EGRESS_ALLOW (the environment) is shown
read-only; entries added here join it without a restart (providers.egress reads them every few
seconds). Only operators (superusers) may open the page: project staff get 403, so a tenant can
never loosen the policy. Every change is in the audit log shown on the page.
"""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import path, reverse

from common.errors import ApiError
from console import access
from console.access import staff_required
from providers.egress import RUNTIME_LIST_SECONDS
from providers.selectors import egress_allow_changes, egress_allow_entries
from providers.services import egress_allow_add, egress_allow_remove


class AllowForm(forms.Form):
    value = forms.CharField(
        label="Host, address or CIDR",
        max_length=255,
        help_text="For example ollama.internal, 127.0.0.1 or 10.0.0.0/8: the value an egress refusal names.",
    )
    note = forms.CharField(label="Note (optional)", required=False, max_length=200)


@staff_required
def egress_page(request):
    if not access.sees_all(request.user):
        return render(request, "egress_console/operators_only.html", {"section": "egress"}, status=403)
    form = AllowForm(request.POST if request.method == "POST" and "remove" not in request.POST else None)
    status = 200
    if request.method == "POST" and "remove" in request.POST:
        try:
            removed = egress_allow_remove(entry_id=int(request.POST["remove"]), actor=request.user)
        except (ApiError, ValueError):
            messages.error(request, "That entry is no longer on the list.")
        else:
            messages.success(request, f"Egress to {removed} is no longer allowed by this list.")
        return redirect(reverse("egress_console:allow"))
    if request.method == "POST":
        if form.is_valid():
            try:
                entry = egress_allow_add(
                    value=form.cleaned_data["value"], note=form.cleaned_data["note"], actor=request.user
                )
            except ApiError as exc:
                form.add_error("value", exc.message.removeprefix("value: "))
            else:
                messages.success(request, f"Egress to {entry.value} is allowed.")
                return redirect(reverse("egress_console:allow"))
        status = 400
    return render(
        request,
        "egress_console/allow.html",
        {
            "section": "egress",
            "form": form,
            "from_env": [v.strip() for v in settings.THREADLESS_EGRESS_ALLOW if v.strip()],
            "entries": egress_allow_entries(),
            "changes": egress_allow_changes(),
            "refresh_seconds": int(RUNTIME_LIST_SECONDS),
        },
        status=status,
    )


app_name = "egress_console"
urlpatterns = [path("", egress_page, name="allow")]
