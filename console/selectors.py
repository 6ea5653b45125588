"""Reads for the Manager console pages, scoped to the projects the console user may see.

`within` is the queryset of those projects (`access.visible_projects`); None means every project.

The memory timeline is read one page of one thread's turns at a time through `entry_turn_idx`,
and the threads list a page at a time through `thread_activity_idx`, so a memory of any size costs
the same to open; nothing here loads a whole memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Count, Exists, OuterRef, Q, QuerySet, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from chat.selectors import turn_state
from common import metrics
from memories import selectors as memory_selectors
from memories.models import DEFAULT_THREAD, Entry, ErrorDigest, Fact, Memory, Thread, Turn
from projects.models import ApiCall, Project

TURNS_PER_PAGE = 20
ERROR_TYPES = ("timeout", "transport", "rate_limit", "content_filter", "provider", "unknown")
ENTRIES_PER_PAGE_CAP = 400


def project_scope(project_id: str | None, within: QuerySet[Project] | None = None) -> Project | None:
    projects = Project.objects.all() if within is None else within
    return projects.filter(pk=project_id).first() if project_id else None


@dataclass
class DayCount:
    day: date
    count: int


@dataclass
class Overview:
    memories: int
    turns: int
    failed_turns: int
    digests: int
    decorate: int
    report: int
    days: int
    digests_by_day: list[DayCount]
    volume_by_op: list[tuple[str, int]]
    newest_failures: list[Failure]


@dataclass
class Failure:
    """One failed task for the Overview: an error digest, or a raw error that no digest covers
    (a failure stored without strict write discipline, e.g. a failed proxy call)."""

    memory_id: str
    turn: int
    task_id: str
    error_type: str
    text: str
    created_at: datetime
    project: Project


def _newest_failures(digests: QuerySet[ErrorDigest], entries: QuerySet[Entry], n: int = 8) -> list[Failure]:
    from_digests = [
        Failure(
            memory_id=d.memory_id,
            turn=d.turn,
            task_id=d.task_id,
            error_type=d.error_type,
            text=d.text,
            created_at=d.created_at,
            project=d.project,
        )
        for d in digests.select_related("project").order_by("-created_at")[:n]
    ]
    covered = ErrorDigest.objects.filter(
        memory_id=OuterRef("memory_id"), turn=OuterRef("turn"), task_id=OuterRef("task_id")
    )
    raw = (
        entries.filter(kind=Entry.Kind.ERROR)
        .exclude(Exists(covered))
        .select_related("memory__project")
        .order_by("-created_at")[:n]
    )
    from_entries = [
        Failure(
            memory_id=e.memory_id,
            turn=e.turn,
            task_id=e.task_id,
            error_type="raw error",
            text=e.content[:300],
            created_at=e.created_at,
            project=e.memory.project,
        )
        for e in raw
    ]
    return sorted(from_digests + from_entries, key=lambda f: f.created_at, reverse=True)[:n]


def overview(*, project: Project | None, days: int = 14, within: QuerySet[Project] | None = None) -> Overview:
    since = timezone.now().date() - timedelta(days=days - 1)
    memories = Memory.objects.all()
    turns = Turn.objects.all()
    digests = ErrorDigest.objects.all()
    entries = Entry.objects.all()
    calls = ApiCall.objects.filter(day__gte=since)
    if project is None and within is not None:
        memories = memories.filter(project__in=within)
        turns = turns.filter(memory__project__in=within)
        digests = digests.filter(project__in=within)
        entries = entries.filter(memory__project__in=within)
        calls = calls.filter(project__in=within)
    if project is not None:
        memories = memories.filter(project=project)
        turns = turns.filter(memory__project=project)
        digests = digests.filter(project=project)
        entries = entries.filter(memory__project=project)
        calls = calls.filter(project=project)
    # A turn failed when it ended in error, or when a task or the upstream failed in it (a raw
    # error or a digest was stored), under any policy.
    failure_entries = Entry.objects.filter(
        memory_id=OuterRef("memory_id"),
        turn=OuterRef("number"),
        kind__in=[Entry.Kind.ERROR, Entry.Kind.DIGEST],
    )
    volume = dict(calls.values_list("operation").annotate(n=Sum("count")).values_list("operation", "n"))
    per_day = dict(
        digests.filter(created_at__date__gte=since)
        .annotate(day=TruncDate("created_at"))
        .values_list("day")
        .annotate(n=Count("id"))
        .values_list("day", "n")
    )
    series = [
        DayCount(day=since + timedelta(days=i), count=per_day.get(since + timedelta(days=i), 0))
        for i in range(days)
    ]
    return Overview(
        memories=memories.count(),
        turns=turns.count(),
        failed_turns=turns.filter(
            Q(state__in=[Turn.State.ERROR, Turn.State.EXECUTION_INTERRUPTED]) | Exists(failure_entries)
        ).count(),
        digests=digests.count(),
        decorate=volume.get("decorate", 0),
        report=volume.get("report", 0),
        days=days,
        digests_by_day=series,
        volume_by_op=sorted(volume.items(), key=lambda kv: -kv[1]),
        newest_failures=_newest_failures(digests, entries),
    )


@dataclass
class Operations:
    """The figures a small install watches without Prometheus (the same ones /metrics exposes)."""

    outbox_depth: int
    worker_lag_seconds: float  # how long the oldest waiting outbox row has waited
    parked_jobs: int  # outbox rows whose job failed every attempt (not retried)
    parked_reason: str  # the newest parked row's reason, redacted when it was parked
    degraded_decorates: int | None  # since the metrics files were started; None with metrics off
    metrics_on: bool


def operations(*, project: Project | None, within: QuerySet[Project] | None = None) -> Operations:
    scope = {"project": project, "projects": within if project is None else None}
    backlog = memory_selectors.outbox_backlog(**scope)
    parked = memory_selectors.outbox_parked(**scope)
    degraded = metrics.counter_total(metrics.DECORATE_DEGRADED) if metrics.ON else None
    return Operations(
        outbox_depth=backlog.depth,
        worker_lag_seconds=backlog.oldest_age_seconds,
        parked_jobs=parked.count,
        parked_reason=parked.newest_reason,
        degraded_decorates=int(degraded) if degraded is not None else None,
        metrics_on=metrics.ON,
    )


def memory_search(
    *,
    project: Project | None,
    query: str = "",
    with_digests: bool = False,
    within: QuerySet[Project] | None = None,
) -> QuerySet[Memory]:
    qs = Memory.objects.select_related("project")
    if within is not None:
        qs = qs.filter(project__in=within)
    if project is not None:
        qs = qs.filter(project=project)
    query = query.strip()
    if query:
        qs = qs.filter(
            Q(pk=query)
            | Q(external_id__icontains=query)
            | Q(metadata__icontains=query)
            | Q(instructions__icontains=query)
        )
    if with_digests:
        qs = qs.filter(digest_count__gt=0)
    return qs.order_by("-last_used_at", "-id")


@dataclass
class TurnView:
    number: int
    turn: Turn | None
    entries: list[Entry] = field(default_factory=list)
    truncated: bool = False

    @property
    def state(self) -> str:
        """The turn's state as the API reads it (an expired lease reads as interrupted)."""
        return turn_state(self.turn) if self.turn is not None else ""

    @property
    def failed(self) -> bool:
        """A task or the upstream failed in this turn (a raw error or a digest was stored), whatever
        the policy and whatever state the turn ended in."""
        return any(e.kind in (Entry.Kind.ERROR, Entry.Kind.DIGEST) for e in self.entries)


@dataclass
class TimelinePage:
    turns: list[TurnView]
    page: int
    pages: int
    total_turns: int
    first_turn: int
    last_turn: int
    newest_first: bool = True
    thread: str = DEFAULT_THREAD

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.pages


def timeline_page_for_turn(
    *, thread: Thread, turn: int, per_page: int = TURNS_PER_PAGE, newest_first: bool = True
) -> int:
    """The page of the thread's timeline that holds `turn` (page 1 holds the newest turns, or the
    oldest). `thread` as `memories.selectors.thread_view` gives it (the default thread's too)."""
    last = max(thread.last_turn, 1)
    turn = min(max(turn, 1), last)
    return (last - turn) // per_page + 1 if newest_first else (turn - 1) // per_page + 1


def _mark_raw_errors_shown_in_digests(entries: list[Entry]) -> None:
    """A raw error that a digest of the same turn and task also carries is shown once, in the
    digest: its entry gets `in_digest` (the digest's seq)."""
    digests = {
        (e.turn, e.task_id): e
        for e in entries
        if e.kind == Entry.Kind.DIGEST and e.digest_row is not None and e.digest_row.raw_error
    }
    for entry in entries:
        digest = digests.get((entry.turn, entry.task_id)) if entry.kind == Entry.Kind.ERROR else None
        entry.in_digest = digest.seq if digest is not None else None


def timeline_page(
    *,
    memory: Memory,
    thread: Thread,
    page: int = 1,
    per_page: int = TURNS_PER_PAGE,
    newest_first: bool = True,
) -> TimelinePage:
    """One page of one thread's turns, newest first (or oldest first); entries in order inside a
    turn, capped per page. `thread` as `memories.selectors.thread_view` gives it."""
    name, last = thread.name, thread.last_turn
    pages = max(1, -(-last // per_page))
    page = min(max(page, 1), pages)
    if last == 0:
        return TimelinePage(
            turns=[],
            page=1,
            pages=1,
            total_turns=0,
            first_turn=0,
            last_turn=0,
            newest_first=newest_first,
            thread=name,
        )
    if newest_first:
        hi = last - (page - 1) * per_page
        lo = max(1, hi - per_page + 1)
    else:
        lo = (page - 1) * per_page + 1
        hi = min(last, lo + per_page - 1)
    entries = list(
        Entry.objects.filter(memory=memory, thread=name, turn__gte=lo, turn__lte=hi)
        .select_related("errordigest")
        .order_by("-turn" if newest_first else "turn", "seq")[: ENTRIES_PER_PAGE_CAP + 1]
    )
    truncated = len(entries) > ENTRIES_PER_PAGE_CAP
    entries = entries[:ENTRIES_PER_PAGE_CAP]
    for entry in entries:
        try:
            entry.digest_row = entry.errordigest if entry.kind == Entry.Kind.DIGEST else None
        except ObjectDoesNotExist:
            entry.digest_row = None
    _mark_raw_errors_shown_in_digests(entries)
    turns = {
        t.number: t for t in Turn.objects.filter(memory=memory, thread=name, number__gte=lo, number__lte=hi)
    }
    views: dict[int, TurnView] = {n: TurnView(number=n, turn=turns.get(n)) for n in range(lo, hi + 1)}
    for entry in entries:
        views.setdefault(entry.turn, TurnView(number=entry.turn, turn=turns.get(entry.turn))).entries.append(
            entry
        )
    ordered = [
        views[n] for n in sorted(views, reverse=newest_first) if views[n].entries or views[n].turn is not None
    ]
    if truncated and ordered:
        ordered[-1].truncated = True
    return TimelinePage(
        turns=ordered,
        page=page,
        pages=pages,
        total_turns=last,
        first_turn=lo,
        last_turn=hi,
        newest_first=newest_first,
        thread=name,
    )


class ThreadActivity:
    """A memory's threads, newest activity first, as a sequence Django's Paginator pages through:
    the named threads' rows a page at a time (`thread_activity_idx`), with the default thread (once
    it has had a turn; it has no row) placed among them by its newest entry's time, in the order
    `memories.selectors.thread_list` gives the API."""

    def __init__(self, memory: Memory) -> None:
        self.rows = Thread.objects.filter(memory_id=memory.pk).order_by("-updated_at", "-name")
        self.default: Thread | None = None
        self.default_at = 0  # the default thread's place in the order
        if memory.last_turn:
            self.default = memory_selectors.thread_get(memory=memory, name=DEFAULT_THREAD)
            newer = Q(updated_at__gt=self.default.updated_at) | Q(
                updated_at=self.default.updated_at, name__gt=DEFAULT_THREAD
            )
            self.default_at = self.rows.filter(newer).count()

    def count(self) -> int:
        return self.rows.count() + (self.default is not None)

    def __getitem__(self, span: slice) -> list[Thread]:
        start, stop = span.start or 0, span.stop
        if self.default is None:
            return list(self.rows[start:stop])
        at = self.default_at  # rows before it keep their index; rows after it are one further on
        found = list(self.rows[start : min(stop, at)]) if start < at else []
        if start <= at < stop:
            found.append(self.default)
        if stop > at + 1:
            found += list(self.rows[max(start, at + 1) - 1 : stop - 1])
        return found


def thread_choices(*, memory: Memory, current: str, limit: int = 50) -> tuple[list[Thread], bool]:
    """The threads the timeline's filter offers: the `limit` most recently active, the one shown
    (`current`) among them; and whether the memory has more (the Threads tab lists them all)."""
    rows, more = memory_selectors.thread_list(memory=memory, limit=limit)
    if current not in {t.name for t in rows}:
        shown = memory_selectors.thread_view(memory=memory, name=current)
        if current == DEFAULT_THREAD or shown.pk is not None:
            rows.append(shown)
    return rows, more


@dataclass(frozen=True)
class FactSource:
    """A message a fact was learned from, by the numbers the timeline shows it under."""

    thread: str
    turn: int
    seq: int
    said_at: datetime


def fact_sources(*, memory: Memory, facts: list[Fact]) -> dict[str, tuple[list[FactSource], int]]:
    """For each fact, its source messages in the timeline's terms (thread, turn, seq, when said),
    in seq order, and how many of its sources are no longer stored: one read of the facts'
    sources, one of their entries."""
    ids = memory_selectors.fact_sources(fact_ids=[f.pk for f in facts])
    wanted = {i for sources in ids.values() for i in sources}
    rows = (
        Entry.objects.filter(memory=memory, pk__in=wanted).values_list(
            "id", "thread", "turn", "seq", "created_at"
        )
        if wanted
        else []
    )
    found = {
        pk: FactSource(thread=thread, turn=turn, seq=seq, said_at=at) for pk, thread, turn, seq, at in rows
    }
    out = {}
    for fact in facts:
        sources = [found[i] for i in ids.get(fact.pk, []) if i in found]
        out[fact.pk] = (sorted(sources, key=lambda s: s.seq), len(ids.get(fact.pk, [])) - len(sources))
    return out


@dataclass
class DigestFilters:
    project: Project | None = None
    agent: str = ""
    task: str = ""
    error_type: str = ""
    since: datetime | None = None
    until: datetime | None = None
    within: QuerySet[Project] | None = None  # the projects the console user may see; None = all


def digest_search(*, filters: DigestFilters) -> QuerySet[ErrorDigest]:
    qs = ErrorDigest.objects.select_related("memory", "project")
    if filters.within is not None:
        qs = qs.filter(project__in=filters.within)
    if filters.project is not None:
        qs = qs.filter(project=filters.project)
    if filters.agent:
        qs = qs.filter(agent_id=filters.agent)
    if filters.task:
        qs = qs.filter(task_id=filters.task)
    if filters.error_type:
        qs = qs.filter(error_type=filters.error_type)
    if filters.since:
        qs = qs.filter(created_at__gte=filters.since)
    if filters.until:
        qs = qs.filter(created_at__lt=filters.until)
    return qs.order_by("-created_at", "-id")


def digest_counts_by_task(*, digests: QuerySet[ErrorDigest]) -> list[dict]:
    return list(digests.order_by().values("task_id").annotate(n=Count("id")).order_by("-n", "task_id")[:50])


def digest_choices(
    *, project: Project | None, within: QuerySet[Project] | None = None
) -> dict[str, list[str]]:
    qs = ErrorDigest.objects.all() if project is None else ErrorDigest.objects.filter(project=project)
    if within is not None:
        qs = qs.filter(project__in=within)
    return {
        "tasks": sorted(set(qs.values_list("task_id", flat=True).distinct()[:200])),
        "error_types": sorted(
            set(qs.values_list("error_type", flat=True).distinct()[:50]) | set(ERROR_TYPES)
        ),
        "agents": sorted(a for a in set(qs.values_list("agent_id", flat=True).distinct()[:200]) if a),
    }
