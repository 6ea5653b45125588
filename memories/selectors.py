"""Reads. The window read is the hot path of decorate: plain rows through `entry_window_idx`,
newest first, in growing chunks, stopping as soon as the budget is met. Never a model instance,
never a serializer, never a COUNT over the memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import QuerySet
from threadless.window import WindowFitter

from .errors import NotFound
from .models import ApiKey, Entry, ErrorDigest, Fact, Memory, Project

WINDOW_COLUMNS = ("seq", "turn", "role", "content", "parts", "name", "tool_calls", "tool_call_id", "tokens")
FIRST_CHUNK = 64


def memory_get(*, project: Project, memory_id: str) -> Memory:
    """The one way API code reaches a memory: scoped to the key's project, else 404."""
    memory = Memory.objects.filter(project=project, pk=memory_id).first()
    if memory is None:
        raise NotFound(f"No memory '{memory_id}' in this project.", hint="Use an id that POST /v1/memories returned.")
    return memory


def memory_list(
    *, project: Project, external_id: str | None = None, metadata: dict | None = None
) -> QuerySet[Memory]:
    qs = Memory.objects.filter(project=project)
    if external_id is not None:
        qs = qs.filter(external_id=external_id)
    for key, value in (metadata or {}).items():
        qs = qs.filter(**{f"metadata__{key}": value})
    return qs.order_by("-created_at", "-id")


def key_list(*, project: Project) -> QuerySet[ApiKey]:
    return ApiKey.objects.filter(project=project).order_by("-created_at")


@dataclass
class Window:
    rows: list[tuple] = field(default_factory=list)  # WINDOW_COLUMNS, oldest first
    tokens: int = 0
    first_turn: int | None = None
    first_seq: int | None = None


def memory_window(
    *, memory_id: str, before_seq: int | None, budget: int, reserved: int, new_has_user: bool
) -> Window:
    """The newest committed messages that fit (SPEC 4.3), oldest first."""
    fitter = WindowFitter(budget, reserved, new_has_user)
    base = Entry.objects.filter(memory_id=memory_id, kind="message", committed=True)
    fetched: list[tuple] = []
    cursor = before_seq
    chunk = FIRST_CHUNK
    going = True
    while going:
        qs = base if cursor is None else base.filter(seq__lt=cursor)
        rows = list(qs.order_by("-seq").values_list(*WINDOW_COLUMNS)[:chunk])
        for row in rows:
            fetched.append(row)
            if not fitter.push(row[8], row[2]):
                going = False
                break
        if len(rows) < chunk:
            break
        cursor = rows[-1][0]
        chunk = min(chunk * 4, 4096)
    keep = fitter.result()
    kept = fetched[:keep]
    kept.reverse()
    window = Window(rows=kept, tokens=sum(r[8] for r in kept))
    if kept:
        window.first_turn = kept[0][1]
        window.first_seq = kept[0][0]
    return window


def failures_in_turns(*, memory_id: str, from_turn: int) -> list[tuple]:
    """Committed digest and error entries of turns from `from_turn` on: (turn, kind, task_id, content)."""
    return list(
        Entry.objects.filter(memory_id=memory_id, kind__in=("digest", "error"), committed=True, turn__gte=from_turn)
        .order_by("seq")
        .values_list("turn", "kind", "task_id", "content")[:50]
    )


def active_facts(*, memory_id: str, limit: int = 200) -> list[tuple]:
    """(id, text, tokens) newest first."""
    return list(
        Fact.objects.filter(memory_id=memory_id, active=True)
        .order_by("-updated_at")
        .values_list("id", "text", "tokens")[:limit]
    )


def fact_list(*, memory: Memory, include_history: bool = False) -> QuerySet[Fact]:
    qs = Fact.objects.filter(memory=memory)
    if not include_history:
        qs = qs.filter(active=True)
    return qs.order_by("-updated_at", "-id")


def fact_get(*, memory: Memory, fact_id: str) -> Fact:
    fact = Fact.objects.filter(memory=memory, pk=fact_id).first()
    if fact is None:
        raise NotFound(f"No fact '{fact_id}' in this memory.", hint="Use an id that GET …/facts returned.")
    return fact


def entry_list(*, memory: Memory, include_uncommitted: bool = False) -> QuerySet[Entry]:
    qs = Entry.objects.filter(memory=memory)
    if not include_uncommitted:
        qs = qs.filter(committed=True)
    return qs.order_by("seq")


def digest_list(*, project: Project) -> QuerySet[ErrorDigest]:
    return ErrorDigest.objects.filter(project=project).order_by("-created_at")
