"""Manager console page for the proxy: each project's upstream per provider (base URL + key).

The key goes into the project's secret store and is never shown again; the page says only
whether one is set.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import path, reverse

from common.errors import ApiError
from console import access
from console.access import staff_required
from proxy import services
from proxy.protocols import PROTOCOLS

LABELS = {"openai": "OpenAI", "anthropic": "Anthropic"}


class UpstreamForm(forms.Form):
    base_url = forms.CharField(
        label="Upstream base URL",
        required=False,
        max_length=500,
        help_text="Empty: the provider's official API.",
    )
    api_key = forms.CharField(
        label="Upstream API key",
        required=False,
        max_length=10_000,
        strip=True,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        help_text="Stored encrypted; leave empty to keep the current key (a changed base URL "
        "removes it unless you enter it again).",
    )
    remove_key = forms.BooleanField(label="Remove the stored key", required=False)
    api_key_env = forms.CharField(
        label="Or a server environment key",
        required=False,
        max_length=100,
        help_text="A name from THREADLESS_PROVIDER_ENV_ALLOW (sent only where it is "
        "pinned), when the operator allows it (THREADLESS_PROXY_ENV_KEYS).",
    )


@staff_required
def proxy_settings_page(request):
    projects = list(access.visible_projects(request.user).order_by("name"))
    chosen = request.POST.get("project") or request.GET.get("project")
    # Another project's id (or one that does not exist) is a 404, for a read and for a write.
    project = access.project_for(request.user, chosen) if chosen else (projects[0] if projects else None)
    status = 200
    bound = request.POST.get("provider") if request.method == "POST" else None
    forms_by_provider = {}
    current = services.upstream_settings(project=project) if project else {}
    for name in PROTOCOLS:
        initial = {
            "base_url": (current.get(name) or {}).get("base_url") or "",
            "api_key_env": (current.get(name) or {}).get("api_key_env") or "",
        }
        forms_by_provider[name] = UpstreamForm(
            request.POST if bound == name else None, initial=initial, prefix=name
        )
    if bound in forms_by_provider and project is not None:
        form = forms_by_provider[bound]
        if form.is_valid():
            data = form.cleaned_data
            changes = {"base_url": data["base_url"] or None, "api_key_env": data["api_key_env"] or None}
            if data["remove_key"]:
                changes["api_key"] = None
            elif data["api_key"]:
                changes["api_key"] = data["api_key"]
            try:
                saved = services.upstream_setting_set(project=project, provider=bound, **changes)
            except ApiError as exc:
                form.add_error(None, exc.message)
            else:
                messages.success(request, f"{LABELS[bound]} upstream of {project.name} saved.")
                if saved["api_key_cleared"]:
                    messages.warning(
                        request,
                        "The stored key was removed: it belonged to the previous base URL. "
                        "Enter the key for the new upstream.",
                    )
                return redirect(reverse("proxy_console:settings") + f"?project={project.pk}")
        status = 400
    return render(
        request,
        "proxy_console/settings.html",
        {
            "section": "proxy",
            "projects": projects,
            "project": project,
            "providers": [(name, forms_by_provider[name], current.get(name) or {}) for name in PROTOCOLS],
        },
        status=status,
    )


app_name = "proxy_console"
urlpatterns = [path("", proxy_settings_page, name="settings")]
