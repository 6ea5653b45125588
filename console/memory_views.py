"""Console pages for one memory (SPEC 7): the memories list, a memory's tabs (timeline, threads,
facts, files, search, "What the model sees"), editing its facts and deleting it.

Thin views: reads come from selectors, writes go through `memories.services`, and "What the
model sees" is the shared context builder run as a dry-run decorate (`store=False`). When a
request comes from htmx only the changed part of the page is rendered (`pages.partial_template`).
"""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST
from django.views.decorators.vary import vary_on_headers

from common.errors import ApiError
from console import access
from console import selectors as sel
from console.access import staff_required
from console.forms import FactForm, WhatModelSeesForm
from console.pages import page_number, partial_template
from memories import selectors as memory_selectors
from memories import services
from memories.models import DEFAULT_THREAD, Fact, Memory
from memories.policy import policy_parse


@staff_required
@vary_on_headers("HX-Request")
def memories(request):
    within = access.visible_projects(request.user)
    project = access.project_scope(request.user, request.GET.get("project"))
    query = request.GET.get("q", "")[:200]
    with_digests = request.GET.get("digests") == "1"
    qs = sel.memory_search(project=project, query=query, with_digests=with_digests, within=within)
    page = Paginator(qs, 25).get_page(page_number(request))
    params = request.GET.copy()
    params.pop("page", None)
    return render(
        request,
        partial_template(request, "console/memories.html", "results"),
        {
            "section": "memories",
            "page": page,
            "query": query,
            "project": project,
            "with_digests": with_digests,
            "projects": within.order_by("name"),
            "params": params.urlencode(),
        },
    )


def _memory(request, memory_id: str) -> Memory:
    memory = (
        Memory.objects.select_related("project")
        .filter(pk=memory_id, project__in=access.visible_projects(request.user))
        .first()
    )
    if memory is None:
        raise Http404("No such memory.")
    return memory


MODEL_MESSAGES_SHOWN = 60


def _model_view(
    memory: Memory, form: WhatModelSeesForm, show_all: bool = False, thread: str = DEFAULT_THREAD
) -> dict:
    """A dry-run decorate in `thread`: exactly what decorate would build now, storing nothing."""
    message = (form.cleaned_data.get("message") or "") if form.is_valid() else ""
    budget = (
        form.cleaned_data.get("budget_tokens") if form.is_valid() else None
    ) or memory.last_budget_tokens
    new = [{"role": "user", "content": message}] if message.strip() else []
    try:
        built = services.memory_decorate(
            memory=memory, messages=new, budget_tokens=budget, store=False, thread=thread
        )
    except ApiError as exc:
        return {"error": exc.message}
    # A 60,000-token window can hold thousands of messages: show the newest unless asked for all.
    hidden = 0 if show_all else max(0, len(built["messages"]) - MODEL_MESSAGES_SHOWN)
    return {"built": built, "budget": budget, "shown_messages": built["messages"][hidden:], "earlier": hidden}


def _files_context(memory: Memory, path: str | None, version_id: str | None) -> dict:
    """The Files tab: every file and kept version by path, size and author, and the content of the
    one file or version asked for (`path`, `version`) only, so the page stays small whatever the
    files hold."""
    history = memory_selectors.file_versions(memory=memory)
    nodes = memory_selectors.file_list(memory=memory)
    live = {node.path: node for node in nodes}
    context: dict = {
        "files": [(node, history.get(node.path, [])) for node in nodes],
        "gone_files": [(p, versions) for p, versions in history.items() if p not in live],
        "shown": None,
    }
    if path is None:
        return context
    node, versions = live.get(path), history.get(path, [])
    if (node is None or node.is_dir) and not versions:
        raise Http404("No such file.")
    version = None
    if version_id is not None:
        version = next((v for v in versions if str(v.pk) == version_id), None)
        if version is None:
            raise Http404("No such version.")
    # One content per page, read here (the rows above were loaded without theirs).
    content = version.content if version else node.content if node else None
    context["shown"] = {
        "path": path,
        "node": node,
        "version": version,
        "versions": versions,
        "content": content,
    }
    return context


def timeline_href(memory: Memory, thread: str = DEFAULT_THREAD, **params) -> str:
    """The memory's timeline link, in `thread` (left out for the default one), with `params`
    (`order`, `page`, `turn`); the thread's name is encoded, whatever characters it holds."""
    query = {"tab": "timeline", **({"thread": thread} if thread != DEFAULT_THREAD else {}), **params}
    return reverse("console:memory", args=[memory.pk]) + "?" + urlencode(query)


def _facts_context(memory: Memory, **extra) -> dict:
    facts = list(Fact.objects.filter(memory=memory, active=True).order_by("-updated_at", "-id"))
    provenance = sel.fact_sources(memory=memory, facts=facts)
    for fact in facts:
        sources, fact.sources_gone = provenance[fact.pk]
        # Each source links to its message in the timeline: the page of its turn, at its entry.
        fact.sources = [
            (source, timeline_href(memory, source.thread, turn=source.turn) + f"#entry-{source.seq}")
            for source in sources
        ]
    return {"facts": facts, "fact_form": extra.pop("fact_form", None) or FactForm(), **extra}


def _thread_name(request) -> str:
    """The thread the timeline and the dry run are in: `?thread=`, the default one when absent or
    not a thread id by the API's rule (so no such value reaches a query)."""
    try:
        return services.external_id_check(request.GET.get("thread", DEFAULT_THREAD), field="thread")
    except ApiError:
        return DEFAULT_THREAD


SEARCH_RESULTS = 20
SEARCH_QUERY_CHARS = 2000  # the API's limit on a search query


def _search_context(memory: Memory, query: str) -> dict:
    """The search box's results: the API's search (`message_search`) over every thread, each hit
    linked to its message in the timeline (the page of its turn, at its entry)."""
    hits = memory_selectors.message_search(memory=memory, query=query, limit=SEARCH_RESULTS) if query else []
    for hit in hits:
        hit["href"] = timeline_href(memory, hit["thread"], turn=hit["turn"]) + f"#entry-{hit['seq']}"
    return {"hits": hits, "search_max": SEARCH_RESULTS}


@staff_required
@vary_on_headers("HX-Request")
def memory_detail(request, memory_id: str):
    memory = _memory(request, memory_id)
    tab = request.GET.get("tab", "timeline")
    if tab not in ("timeline", "threads", "facts", "files", "search", "model"):
        tab = "timeline"
    search_query = request.GET.get("q", "").strip()[:SEARCH_QUERY_CHARS]
    name = _thread_name(request)
    threads = sel.ThreadActivity(memory)
    context = {
        "section": "memories",
        "memory": memory,
        "tab": tab,
        "thread_count": threads.count(),
        "thread_name": name,
        # What the timeline and dry-run tab links keep of the URL: the thread shown.
        "thread_query": "&" + urlencode({"thread": name}) if name != DEFAULT_THREAD else "",
        "policy": policy_parse(memory.policy) if isinstance(memory.policy, dict) else None,
        "search_query": search_query,
    }
    if tab == "timeline":
        thread = memory_selectors.thread_view(memory=memory, name=name)
        newest_first = request.GET.get("order") != "oldest"
        if "turn" in request.GET and "page" not in request.GET:
            try:
                page = sel.timeline_page_for_turn(
                    thread=thread, turn=int(request.GET["turn"]), newest_first=newest_first
                )
            except ValueError:
                page = 1
        else:
            page = page_number(request)
        choices, more = sel.thread_choices(memory=memory, current=name)
        order = {} if newest_first else {"order": "oldest"}
        context.update(
            timeline=sel.timeline_page(memory=memory, thread=thread, page=page, newest_first=newest_first),
            thread_choices=choices,
            more_threads=more,
            unknown_thread=name != DEFAULT_THREAD and thread.pk is None,
            # The pager's links keep the thread and the order; the order switch keeps the thread.
            timeline_base=timeline_href(memory, name, **order),
            newest_href=timeline_href(memory, name),
            oldest_href=timeline_href(memory, name, order="oldest"),
        )
    elif tab == "threads":
        page = Paginator(threads, 25).get_page(page_number(request))
        for row in page.object_list:
            row.timeline = timeline_href(memory, row.name)
        context.update(page=page, params="tab=threads")
    elif tab == "facts":
        context.update(_facts_context(memory))
    elif tab == "files":
        context.update(_files_context(memory, request.GET.get("path"), request.GET.get("version")))
    elif tab == "search":
        context.update(_search_context(memory, search_query))
    elif tab == "model":
        form = WhatModelSeesForm(
            request.GET if "message" in request.GET or "budget_tokens" in request.GET else None
        )
        context.update({"model_form": form, **_model_view(memory, form, request.GET.get("all") == "1", name)})
    return render(request, partial_template(request, "console/memory_detail.html", "tab"), context)


def _fact(memory: Memory, fact_id: str) -> Fact:
    fact = Fact.objects.filter(memory=memory, pk=fact_id).first()
    if fact is None:
        raise Http404("No such fact.")
    return fact


def _facts_response(request, memory: Memory, note: str = "", status: int = 200, **extra):
    if request.htmx:
        return render(
            request,
            "console/memory_detail.html#facts",
            {"memory": memory, "note": note, **_facts_context(memory, **extra)},
            status=status,
        )
    if note:
        (messages.success if status < 400 else messages.error)(request, note)
    return redirect(reverse("console:memory", args=[memory.pk]) + "?tab=facts")


@staff_required
@require_POST
def fact_add(request, memory_id: str):
    memory = _memory(request, memory_id)
    form = FactForm(request.POST)
    if not form.is_valid():
        return _facts_response(
            request, memory, "The fact needs some text (at most 2,000 characters).", 400, fact_form=form
        )
    try:
        _fact_row, created = services.fact_create(
            memory=memory, text=form.cleaned_data["text"], extractor="console"
        )
    except ApiError as exc:
        return _facts_response(request, memory, exc.message, 400, fact_form=form)
    return _facts_response(request, memory, "Fact added." if created else "That fact is already known.")


@staff_required
@require_POST
def fact_edit(request, memory_id: str, fact_id: str):
    memory = _memory(request, memory_id)
    fact = _fact(memory, fact_id)
    form = FactForm(request.POST)
    if not form.is_valid():
        return _facts_response(request, memory, "A fact needs some text (at most 2,000 characters).", 400)
    try:
        services.fact_update(fact=fact, text=form.cleaned_data["text"], extractor="console")
    except ApiError as exc:
        return _facts_response(request, memory, exc.message, 400)
    return _facts_response(request, memory, "Fact saved.")


@staff_required
@require_POST
def fact_delete(request, memory_id: str, fact_id: str):
    memory = _memory(request, memory_id)
    services.fact_delete(fact=_fact(memory, fact_id))
    return _facts_response(request, memory, "Fact deleted.")


@staff_required
def memory_delete(request, memory_id: str):
    memory = _memory(request, memory_id)
    if request.method == "POST":
        if request.POST.get("confirm") != memory.pk:
            return render(
                request,
                "console/memory_delete.html",
                {"section": "memories", "memory": memory, "error": "Type the memory id exactly to confirm."},
                status=400,
            )
        with transaction.atomic():
            receipt = services.memory_delete(memory=memory)
        parts = ", ".join(f"{n} {kind}" for kind, n in receipt.items() if n)
        messages.success(request, f"Memory {memory_id} deleted ({parts or 'nothing else was stored'}).")
        return redirect("console:memories")
    return render(request, "console/memory_delete.html", {"section": "memories", "memory": memory})
