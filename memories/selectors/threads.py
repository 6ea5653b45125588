"""A memory's threads as decorate and the thread routes read them (the default one made from the
memory's own counters)."""

from __future__ import annotations

from django.db.models import Q

from common.errors import NotFound
from memories.models import DEFAULT_THREAD, Entry, Memory, Thread


def thread_view(*, memory: Memory, name: str | None = None) -> Thread:
    """A thread as decorate and the thread routes read it: a named thread's row (unsaved and empty
    when it has none yet), or for the default thread (`name` None or "default") an unsaved row
    made from the memory's own counters, its counts the memory's less its named threads'."""
    if name is None or name == DEFAULT_THREAD:
        return Thread(
            memory=memory,
            name=DEFAULT_THREAD,
            last_turn=memory.last_turn,
            turn_start_seq=memory.turn_start_seq,
            summary=memory.summary,
            summary_upto_seq=memory.summary_upto_seq,
            message_count=max(0, memory.message_count - memory.threads_message_count),
            token_count=max(0, memory.token_count - memory.threads_token_count),
            created_at=memory.created_at,
            updated_at=memory.created_at,
        )
    found = Thread.objects.filter(memory_id=memory.pk, name=name).first()
    return found if found is not None else Thread(memory=memory, name=name)


def thread_newest_at(*, memory: Memory, name: str):
    """When the thread's newest entry was said (None: it has none): its last row by (turn, seq),
    which grow together inside a thread, so the (memory, thread, turn, seq) index answers it."""
    return (
        Entry.objects.filter(memory_id=memory.pk, thread=name)
        .order_by("-turn", "-seq")
        .values_list("created_at", flat=True)
        .first()
    )


def thread_oldest_at(*, memory: Memory, name: str):
    """When the thread's first entry was said (None: it has none), by the same index."""
    return (
        Entry.objects.filter(memory_id=memory.pk, thread=name)
        .order_by("turn", "seq")
        .values_list("created_at", flat=True)
        .first()
    )


def _default_thread_times(default: Thread, memory: Memory) -> None:
    """The default thread's times from its messages: it began at the memory's creation or at its
    first message when imported history is older, and was last active at its newest message."""
    oldest = thread_oldest_at(memory=memory, name=DEFAULT_THREAD)
    if oldest is not None and oldest < default.created_at:
        default.created_at = oldest
    default.updated_at = thread_newest_at(memory=memory, name=DEFAULT_THREAD) or memory.created_at


def thread_list(*, memory: Memory, limit: int, after: tuple | None = None) -> tuple[list[Thread], bool]:
    """One page of the memory's threads, newest activity first by (updated_at, name), after the
    cursor `after` ((updated_at, name) of the last one shown): (threads, whether more follow).
    The default thread is one of them once it has had a turn (`thread_view`, its activity its
    newest message's time)."""
    qs = Thread.objects.filter(memory_id=memory.pk).order_by("-updated_at", "-name")
    if after is not None:
        qs = qs.filter(Q(updated_at__lt=after[0]) | Q(updated_at=after[0], name__lt=after[1]))
    rows = list(qs[: limit + 1])
    if memory.last_turn:
        default = thread_view(memory=memory)
        _default_thread_times(default, memory)
        if after is None or (default.updated_at, default.name) < after:
            rows.append(default)
            rows.sort(key=lambda t: (t.updated_at, t.name), reverse=True)
    return rows[:limit], len(rows) > limit


def thread_get(*, memory: Memory, name: str) -> Thread:
    """One thread of the memory (the default one once it has had a turn), else 404."""
    if name == DEFAULT_THREAD:
        if memory.last_turn:
            found = thread_view(memory=memory)
            _default_thread_times(found, memory)
            return found
    else:
        found = Thread.objects.filter(memory_id=memory.pk, name=name).first()
        if found is not None:
            return found
    raise NotFound(f"No thread '{name}' in this memory.", hint="Use a thread id that GET …/threads returned.")
