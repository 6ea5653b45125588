"""Manager console pages for agents: list, config editor, secret store and the Manager chat.

Thin views over `chat.services` / `chat.selectors`. The Manager chat streams a turn from the
same services the /v1 API uses (staff see the raw taskErrors text; end users never do).
"""

from __future__ import annotations

import json

import orjson
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from chat import runner, selectors, services
from chat.api.conversations import sse_response
from chat.models import Agent, Conversation
from common.errors import ApiError
from common.messages import text_of
from console import access
from console.access import staff_required
from console.agent_forms import AgentForm, SecretForm
from projects import selectors as project_selectors
from projects import services as project_services

DEFAULT_CONFIG = {
    "description": "A helpful assistant.",
    "memoryPolicy": {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}},
    "workflow": [
        {
            "id": "llm",
            "type": "llm",
            "provider": "demo",
            "model": "demo",
            "instructions": "You are a helpful assistant.",
        },
    ],
    "allowedOrigins": [],
}


def _agent(request, agent_id: str):
    """The agent, if its project is one the console user may see (else 404, like a missing id)."""
    agent = (
        Agent.objects.select_related("project")
        .filter(pk=agent_id, project__in=access.visible_projects(request.user))
        .first()
    )
    if agent is None:
        raise Http404("No such agent.")
    return agent


def split_path_error(message: str) -> tuple[str, str]:
    """'workflow[0].provider: must be …' → ('workflow[0].provider', 'must be …')."""
    path, sep, rest = message.partition(": ")
    if sep and path and " " not in path:
        return path, rest
    return "", message


def parse_config(text: str) -> tuple[dict | None, dict | None]:
    """(config, None) or (None, error) where error = {"path", "message"} for the editor."""
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, {
            "path": f"line {exc.lineno}, column {exc.colno}",
            "message": f"not valid JSON: {exc.msg}.",
        }
    if not isinstance(config, dict):
        return None, {"path": "(top level)", "message": "the config must be a JSON object."}
    return config, None


def _save(request, form: AgentForm, agent=None):
    """Create or update through chat.services; returns (agent, error)."""
    config, error = parse_config(form.cleaned_data["config"])
    if error:
        return None, error
    slug = form.cleaned_data.get("slug") or None
    try:
        if agent is None:
            project = access.visible_projects(request.user).filter(pk=form.cleaned_data["project"]).first()
            if project is None:
                return None, {"path": "project", "message": "choose a project."}
            return services.agent_create(
                project=project, name=form.cleaned_data["name"], config=config, slug=slug
            ), None
        return services.agent_update(
            agent=agent, name=form.cleaned_data["name"], config=config, **({"slug": slug} if slug else {})
        ), None
    except ApiError as exc:
        path, message = split_path_error(exc.message)
        return None, {"path": path, "message": message}


def _projects(request):
    return [(p.pk, p.name) for p in access.visible_projects(request.user).order_by("name")]


@staff_required
def agents(request):

    rows = (
        Agent.objects.filter(project__in=access.visible_projects(request.user))
        .select_related("project")
        .annotate(conversations_n=Count("conversations"))
        .order_by("project__name", "name")
    )
    return render(request, "chat_console/agents.html", {"section": "agents", "agents": rows})


@staff_required
def agent_new(request):
    form = AgentForm(
        request.POST or None,
        projects=_projects(request),
        initial={"config": json.dumps(DEFAULT_CONFIG, indent=2), "project": request.GET.get("project", "")},
    )
    error = None
    if request.method == "POST" and form.is_valid():
        agent, error = _save(request, form)
        if agent is not None:
            messages.success(request, f"Agent “{agent.name}” created. Try it in the Manager chat.")
            return redirect("chat_console:agent", agent_id=agent.pk)
    status = 400 if request.method == "POST" else 200
    return render(
        request,
        "chat_console/agent_edit.html",
        {"section": "agents", "form": form, "error": error, "agent": None},
        status=status,
    )


@staff_required
def agent_edit(request, agent_id: str):
    agent = _agent(request, agent_id)
    initial = {
        "name": agent.name,
        "slug": agent.slug,
        "project": agent.project_id,
        "config": json.dumps(agent.config, indent=2, ensure_ascii=False),
    }
    form = AgentForm(request.POST or None, projects=_projects(request), initial=initial, editing=True)
    error = None
    if request.method == "POST" and form.is_valid():
        saved, error = _save(request, form, agent)
        if saved is not None:
            messages.success(request, "Agent saved. The next turn uses the new config.")
            return redirect("chat_console:agent", agent_id=agent.pk)
        agent.refresh_from_db()
    status = 400 if request.method == "POST" else 200
    return render(
        request,
        "chat_console/agent_edit.html",
        {"section": "agents", "form": form, "error": error, "agent": agent},
        status=status,
    )


@staff_required
def agent_delete(request, agent_id: str):
    agent = _agent(request, agent_id)
    if request.method == "POST":
        if request.POST.get("confirm") != agent.slug:
            return render(
                request,
                "chat_console/agent_delete.html",
                {"section": "agents", "agent": agent, "error": "Type the agent's slug to confirm."},
                status=400,
            )
        receipt = services.agent_delete(agent=agent)
        messages.success(
            request,
            f"Agent “{agent.name}” deleted with {receipt.get('conversations', 0)} "
            "conversation(s); its publishable keys are revoked.",
        )
        return redirect("chat_console:agents")
    return render(request, "chat_console/agent_delete.html", {"section": "agents", "agent": agent})


# --- secret store ------------------------------------------------------------------------------


@staff_required
def secrets_page(request):

    projects = list(access.visible_projects(request.user).order_by("name"))
    wanted = request.POST.get("project") or request.GET.get("project")
    project = (
        next((p for p in projects if p.pk == wanted), None) if wanted else (projects[0] if projects else None)
    )
    if wanted and project is None:
        raise Http404("No such project.")
    form = SecretForm(request.POST or None)
    status = 200
    if request.method == "POST" and project is not None:
        if request.POST.get("delete"):
            try:
                project_services.secret_delete(project=project, name=request.POST["delete"])
                messages.success(request, f"Secret {request.POST['delete']} deleted.")
            except ApiError as exc:
                messages.error(request, exc.message)
            return redirect(reverse("chat_console:secrets") + f"?project={project.pk}")
        if form.is_valid():
            try:
                project_services.secret_set(
                    project=project, name=form.cleaned_data["name"], value=form.cleaned_data["value"]
                )
            except ApiError as exc:
                form.add_error(None, exc.message)
            else:
                messages.success(
                    request,
                    f"Secret {form.cleaned_data['name']} saved (encrypted). "
                    f'Use it in an llm task as "apiKeySecret": "{form.cleaned_data["name"]}".',
                )
                return redirect(reverse("chat_console:secrets") + f"?project={project.pk}")
        status = 400
    return render(
        request,
        "chat_console/secrets.html",
        {
            "section": "agents",
            "projects": projects,
            "project": project,
            "form": form,
            "secrets": project_selectors.secret_list(project=project) if project else [],
        },
        status=status,
    )


# --- Manager chat ------------------------------------------------------------------------------


def _history(conversation) -> list[dict]:
    """The conversation's turns for the page: input, reply text, or the failure (raw reason)."""
    runs: dict[tuple[int, str], object] = {}
    for run in selectors.task_runs(conversation=conversation):
        if run.status == "failed":
            runs[(run.turn, run.task_id)] = run
    out = []
    for turn in selectors.conversation_turns(conversation=conversation):
        text = text_of(turn.output or [])
        errors = [
            {**e, "errorType": getattr(runs.get((turn.number, e.get("taskId"))), "error_type", "")}
            for e in turn.task_errors or []
        ]
        out.append(
            {
                "number": turn.number,
                "input": turn.input,
                "text": text,
                "errors": errors,
                "state": selectors.turn_state(turn),
            }
        )
    return out


@staff_required
def manager_chat(request, agent_id: str):
    agent = _agent(request, agent_id)
    conversation = None
    if request.GET.get("c"):
        conversation = Conversation.objects.filter(pk=request.GET["c"], agent=agent).first()
        if conversation is None:
            raise Http404("No such conversation for this agent.")
    recent = Conversation.objects.filter(agent=agent, client_token_hash="").order_by("-created_at")[:10]
    return render(
        request,
        "chat_console/manager_chat.html",
        {
            "section": "agents",
            "agent": agent,
            "conversation": conversation,
            "recent": recent,
            "history": _history(conversation) if conversation else [],
        },
    )


@staff_required
@require_POST
def manager_chat_new(request, agent_id: str):
    agent = _agent(request, agent_id)
    conversation, _ = services.conversation_create(agent=agent, metadata={"source": "manager-chat"})
    return redirect(reverse("chat_console:chat", args=[agent.pk]) + f"?c={conversation.pk}")


async def _staff_conversation(request, agent_id: str, conversation_id: str):
    user = await request.auser()
    if not access.is_staff(user):
        raise PermissionDenied
    conversation = await Conversation.objects.filter(
        pk=conversation_id, agent_id=agent_id, agent__project__in=access.visible_projects(user)
    ).afirst()
    if conversation is None:
        raise Http404("No such conversation for this agent.")
    return conversation


def _error(exc: ApiError) -> HttpResponse:
    return HttpResponse(
        orjson.dumps({"error": {"code": exc.code, "message": exc.message}}),
        status=exc.status,
        content_type="application/json",
    )


async def manager_say(request, agent_id: str, conversation_id: str):
    """POST input=… → the turn's SSE events, unfiltered (staff see the raw reason)."""

    if request.method != "POST":
        return HttpResponse(status=405)
    conversation = await _staff_conversation(request, agent_id, conversation_id)
    try:
        text = services.check_input(request.POST.get("input", ""))
        handle, slot = await services.turn_begin_streamed(
            runner.turn_begin, conversation=conversation, text=text
        )
    except ApiError as exc:
        return _error(exc)
    request_id = getattr(request, "request_id", "")
    return sse_response(services.turn_stream(handle=handle, request_id=request_id, slot=slot), public=False)


async def manager_rerun(request, agent_id: str, conversation_id: str):

    if request.method != "POST":
        return HttpResponse(status=405)
    conversation = await _staff_conversation(request, agent_id, conversation_id)
    try:
        handle, slot = await services.turn_begin_streamed(runner.turn_begin_rerun, conversation=conversation)
    except ApiError as exc:
        return _error(exc)
    request_id = getattr(request, "request_id", "")
    return sse_response(services.turn_stream(handle=handle, request_id=request_id, slot=slot), public=False)
