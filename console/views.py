"""Manager console pages: sign-in, the overview, projects and keys, and error digests (SPEC 7);
a memory's pages are `memory_views`, agents' `agent_views`, webhooks' `webhook_views`.

Thin views: reads come from selectors, writes go through the apps' services. When a request
comes from htmx only the changed part of the page is rendered (`pages.partial_template`).
"""

from __future__ import annotations

from datetime import datetime, time, timedelta

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.core.paginator import Paginator
from django.db.models import F
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from chat.models import Agent
from common.errors import ApiError
from common.heartbeat import worker_state
from console import access
from console import selectors as sel
from console.access import staff_required
from console.forms import DigestFilterForm, KeyForm, ProjectForm, StaffLoginForm
from console.pages import page_number, partial_template
from memories.models import Memory
from projects import services as project_services
from projects.models import ApiKey, Project
from projects.usage import plan_used
from webhooks import selectors as webhook_selectors


def agent_choices(project: Project | None = None, within=None) -> list[tuple[str, str]]:
    """(id, name) of the agents (of `project`, else of the projects `within`)."""
    qs = Agent.objects.all()
    if project is not None:
        qs = qs.filter(project=project)
    elif within is not None:
        qs = qs.filter(project__in=within)
    return [(str(a.pk), f"{a.name} ({a.slug})") for a in qs.order_by("name")[:500]]


# --- sign in -----------------------------------------------------------------------------------


class LoginView(auth_views.LoginView):
    template_name = "console/login.html"
    authentication_form = StaffLoginForm
    redirect_authenticated_user = False

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if form.locked:  # throttled (console.throttle): 429 with the wait
            response.status_code = 429
            response["Retry-After"] = str(settings.THREADLESS_LOGIN_LOCKOUT_SECONDS)
        return response


class LogoutView(auth_views.LogoutView):
    next_page = "console:login"


# --- overview ----------------------------------------------------------------------------------


def _chart(series: list[sel.DayCount]) -> dict:
    """Bar geometry for the server-rendered SVG chart of digests per day (its axis and day labels
    are HTML beside and under it, one grid column per bar)."""
    width, height, top = 700, 140, 4
    peak = max((d.count for d in series), default=0)
    scale_max = max(peak, 1)
    slot = width / max(len(series), 1)
    bars = []
    for i, d in enumerate(series):
        h = 0 if d.count == 0 else max(2.0, (height - top) * d.count / scale_max)
        bars.append(
            {
                "x": round(i * slot + slot * 0.15, 1),
                "w": round(slot * 0.7, 1),
                "y": round(height - (h or 2), 1),
                "h": round(h or 2, 1),
                "count": d.count,
                "label": d.day.strftime("%b %-d"),
                "short": d.day.strftime("%-d"),
                "zero": d.count == 0,
            }
        )
    return {
        "width": width,
        "height": height,
        "bars": bars,
        "peak": peak,
        "base": height - 1,
        "total": sum(d.count for d in series),
    }


@staff_required
def overview(request):
    within = access.visible_projects(request.user)
    project = access.project_scope(request.user, request.GET.get("project"))
    data = sel.overview(project=project, within=within)
    return render(
        request,
        "console/overview.html",
        {
            "section": "overview",
            "data": data,
            "chart": _chart(data.digests_by_day),
            "project": project,
            "projects": within.order_by("name"),
            "worker": worker_state(),
            "operations": sel.operations(project=project, within=within),
            "webhooks_disabled": webhook_selectors.endpoints_disabled(
                projects=within if project is None else [project]
            )[:20],
        },
    )


# --- projects and keys -------------------------------------------------------------------------


@staff_required
def projects(request):
    form = ProjectForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        project = project_services.project_create(
            name=data["name"],
            rate_limit_per_minute=data["rate_limit_per_minute"],
            allowance_requests_per_month=data["allowance_requests_per_month"],
            allowance_memories=data["allowance_memories"],
        )
        if data["retention_days"] is not None:
            project.retention_days = data["retention_days"]
            project.save(update_fields=["retention_days"])
        access.add_member(project, request.user)
        messages.success(request, f"Project “{project.name}” created. Create its first key below.")
        return redirect("console:project", project_id=project.pk)
    rows = access.visible_projects(request.user).order_by("name")
    return render(
        request,
        "console/projects.html",
        {"section": "projects", "projects": rows, "form": form},
        status=400 if form.errors else 200,
    )


def _project(request, project_id: str) -> Project:
    return access.project_for(request.user, project_id)


def _project_context(request, project: Project, **extra) -> dict:
    period = timezone.now().strftime("%Y-%m")
    usage = plan_used(project.pk)  # the live count (the ProjectUsage copy is flushed a few seconds late)
    agents = agent_choices(project)
    names = dict(agents)
    keys = list(
        ApiKey.objects.filter(project=project).order_by(F("revoked_at").asc(nulls_first=True), "-created_at")
    )
    for key in keys:
        key.agent_label = names.get(key.agent_id, key.agent_id)
    return {
        "section": "projects",
        "project": project,
        "keys": keys,
        "usage": usage or 0,
        "period": period,
        "key_form": extra.pop("key_form", None) or KeyForm(agents=agents, initial={"kind": "project"}),
        "settings_form": extra.pop("settings_form", None)
        or ProjectForm(
            initial={
                "name": project.name,
                "rate_limit_per_minute": project.rate_limit_per_minute,
                "allowance_requests_per_month": project.allowance_requests_per_month,
                "allowance_memories": project.allowance_memories,
                "retention_days": project.retention_days,
            }
        ),
        "memory_count": Memory.objects.filter(project=project).count(),
        **extra,
    }


@staff_required
@vary_on_headers("HX-Request")
def project_detail(request, project_id: str):
    project = _project(request, project_id)
    if request.method == "POST":
        form = ProjectForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            project.name = data["name"]
            project.rate_limit_per_minute = data["rate_limit_per_minute"]
            project.allowance_requests_per_month = data["allowance_requests_per_month"]
            project.allowance_memories = data["allowance_memories"]
            project.retention_days = data["retention_days"]
            project.save()
            messages.success(request, "Project settings saved.")
            return redirect("console:project", project_id=project.pk)
        return render(
            request,
            "console/project_detail.html",
            _project_context(request, project, settings_form=form),
            status=400,
        )
    return render(request, "console/project_detail.html", _project_context(request, project))


@staff_required
@require_POST
@vary_on_headers("HX-Request")
def key_create(request, project_id: str):
    project = _project(request, project_id)
    agents = agent_choices(project)
    form = KeyForm(request.POST, agents=agents)
    template = partial_template(request, "console/project_detail.html", "keys")
    if not form.is_valid():
        return render(request, template, _project_context(request, project, key_form=form), status=400)
    data = form.cleaned_data
    try:
        key, plaintext = project_services.key_create(
            project=project, kind=data["kind"], name=data["name"], agent_id=data.get("agent") or ""
        )
    except ApiError as exc:
        form.add_error(None, exc.message)
        return render(request, template, _project_context(request, project, key_form=form), status=400)
    # The plaintext is rendered into this one response and never stored or shown again.
    response = render(request, template, _project_context(request, project, new_key=key, plaintext=plaintext))
    response["Cache-Control"] = "no-store"
    return response


@staff_required
@require_POST
@vary_on_headers("HX-Request")
def key_revoke(request, project_id: str, key_id: int):
    project = _project(request, project_id)
    key = ApiKey.objects.filter(project=project, pk=key_id).first()
    if key is None:
        raise Http404("No such key.")
    project_services.key_revoke(prefix=key.prefix, project=project)
    if request.htmx:
        return render(
            request, "console/project_detail.html#keys", _project_context(request, project, revoked=key)
        )
    messages.success(request, f"Key {key.masked} revoked. Requests with it now get 401.")
    return redirect("console:project", project_id=project.pk)


# --- error digests (ops) -----------------------------------------------------------------------


def _day_start(day) -> datetime | None:
    return timezone.make_aware(datetime.combine(day, time.min)) if day else None


@staff_required
@vary_on_headers("HX-Request")
def digests(request):
    within = access.visible_projects(request.user)
    form = DigestFilterForm(request.GET or None)
    filters = sel.DigestFilters(within=within)
    if form.is_valid():
        data = form.cleaned_data
        until = _day_start(data["until"])
        filters = sel.DigestFilters(
            within=within,
            project=access.project_scope(request.user, data["project"]),
            agent=data["agent"].strip(),
            task=data["task"].strip(),
            error_type=data["error_type"].strip(),
            since=_day_start(data["since"]),
            until=until + timedelta(days=1) if until else None,
        )
    qs = sel.digest_search(filters=filters)
    page = Paginator(qs, 50).get_page(page_number(request))
    params = request.GET.copy()
    params.pop("page", None)
    names = dict(agent_choices(filters.project, within))
    for digest in page.object_list:
        digest.agent_label = names.get(digest.agent_id, digest.agent_id)
    choices = sel.digest_choices(project=filters.project, within=within)
    choices["agents"] = [(a, names.get(a, a)) for a in choices["agents"]]
    return render(
        request,
        partial_template(request, "console/digests.html", "results"),
        {
            "section": "digests",
            "form": form,
            "filters": filters,
            "page": page,
            "counts": sel.digest_counts_by_task(digests=qs),
            "choices": choices,
            "projects": within.order_by("name"),
            "params": params.urlencode(),
        },
    )
