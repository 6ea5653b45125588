"""Threads (SPEC 4.10, 4.11): deleting one conversation of a memory, and importing history into one.

A thread's entries, turns, digests, index rows and summary go with it; a fact goes only when
every source it was learned from was in the thread (one with sources elsewhere keeps those).
The history import appends a thread's existing messages with their own times, all or nothing,
and queues their background work through the outbox exactly as report does."""

from __future__ import annotations

import itertools
import logging
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from common.errors import InvalidRequest
from common.messages import entry_fields
from memories import events, recall
from memories.models import DEFAULT_THREAD, Entry, ErrorDigest, Fact, Memory, RecallVector, Thread, Turn
from memories.selectors import thread_newest_at
from memories.services.entries import entries_import, memory_lock, thread_for_write
from memories.services.outbox import outbox_enqueue
from memories.signals import thread_deleted

log = logging.getLogger("threadless.memories")

IMPORT_MAX_MESSAGES = 2000
CLOCK_SKEW = timedelta(minutes=1)  # how far past the server's clock a message's time may lie


def _facts_forget(memory: Memory, gone: set[int]) -> int:
    """Delete the facts learned only from the entries in `gone`; a fact with sources elsewhere
    keeps those, and a fact only a deleted one superseded holds again. Returns how many went."""
    doomed: list[str] = []
    for fact_id, sources in (
        Fact.objects.filter(memory=memory).exclude(source_entry_ids=[]).values_list("id", "source_entry_ids")
    ):
        ids = {int(x) for x in sources or [] if str(x).isdigit()}
        if not ids & gone:
            continue
        if ids <= gone:
            doomed.append(fact_id)
        else:
            Fact.objects.filter(pk=fact_id).update(source_entry_ids=sorted(ids - gone))
    if doomed:
        Fact.objects.filter(memory=memory, superseded_by_id__in=doomed).update(
            active=True, superseded_by=None, valid_to=None, updated_at=timezone.now()
        )
        Fact.objects.filter(pk__in=doomed).delete()
    return len(doomed)


def thread_open(*, memory: Memory, name: str) -> Thread:
    """A named thread's row, created now when it has none yet (a conversation opened before its
    first message: it lists, and reads back, before anything is said in it)."""
    with transaction.atomic():
        return thread_for_write(memory=memory_lock(memory), name=name)


def thread_delete(*, memory: Memory, name: str) -> dict[str, int]:
    """Remove a thread and everything derived from it only; returns the receipt (counts of
    every kind of row removed). The caller has checked that the thread exists. What is that
    thread in the apps above (an agent's conversation) goes too (`signals.thread_deleted`)."""
    with transaction.atomic():
        locked = memory_lock(memory)
        row = None if name == DEFAULT_THREAD else Thread.objects.filter(memory=locked, name=name).first()
        entries = Entry.objects.filter(memory=locked, thread=name)
        ids = list(entries.values_list("id", flat=True))
        counted = entries.filter(kind="message", committed=True)
        messages, tokens = counted.count(), sum(counted.values_list("tokens", flat=True))
        digests = ErrorDigest.objects.filter(memory=locked, thread=name)
        receipt = {
            "threads": 1,
            "entries": len(ids),
            "turns": Turn.objects.filter(memory=locked, thread=name).count(),
            "digests": digests.count(),
            "facts": _facts_forget(locked, set(ids)),
            "summaries": int(bool((locked if row is None else row).summary)),
            "index_rows": recall.unindex_entries(entry_ids=ids),
        }
        receipt["index_rows"] += RecallVector.objects.filter(memory=locked, entry_id__in=ids).delete()[0]
        digests.delete()
        entries.delete()
        Turn.objects.filter(memory=locked, thread=name).delete()
        update = {
            "message_count": F("message_count") - messages,
            "token_count": F("token_count") - tokens,
            "digest_count": F("digest_count") - receipt["digests"],
        }
        if row is None:  # the default thread's counters and summary are the memory row's
            update.update(last_turn=0, turn_start_seq=0, summary="", summary_upto_seq=0)
        else:
            update.update(
                threads_message_count=F("threads_message_count") - messages,
                threads_token_count=F("threads_token_count") - tokens,
            )
            row.delete()
        Memory.objects.filter(pk=locked.pk).update(**update)
        thread_deleted.send(sender=Thread, memory_id=locked.id, thread=name)
        events.thread_deleted(locked, name, receipt)
    log.info("deleted thread %s of memory %s: %s", name, locked.id, receipt)
    return receipt


def _message_times(raw: list, now: datetime) -> list[datetime]:
    """Each message's `created_at` (ISO 8601 with an offset; absent: now), removed from the
    message; a time in the future beyond CLOCK_SKEW is a 400 naming the message."""
    times = []
    for i, message in enumerate(raw):
        if not isinstance(message, dict) or "created_at" not in message:
            times.append(now)
            continue
        value = message.pop("created_at")
        where = f"messages[{i}].created_at"
        try:
            at = datetime.fromisoformat(value) if isinstance(value, str) else None
        except ValueError:
            at = None
        if at is None or at.tzinfo is None:
            raise InvalidRequest(
                f"{where}: an ISO 8601 time with its offset, e.g. 2025-03-01T09:30:00+00:00."
            )
        if at > now + CLOCK_SKEW:
            raise InvalidRequest(f"{where}: lies in the future; history is what was already said.")
        times.append(at)
    return times


def messages_import(*, memory: Memory, thread: str | None, raw_messages: list, validate) -> dict:
    """Append existing history to a thread (SPEC 4.11), all or nothing: at most
    IMPORT_MAX_MESSAGES messages, each keeping its `created_at` (default now), none older than
    the one before it nor than the thread's newest entry (400 naming the message), none in the
    future. Turns follow the user messages; the background work (facts, recall, compaction) is
    queued through the outbox in the same transaction, as after report.
    `validate`: the messages' validation (common.messages.validate_messages), run after the
    times are taken out of them. Returns {"accepted", "thread", "turns": [first, last]}."""
    if not isinstance(raw_messages, list) or not raw_messages:
        raise InvalidRequest("messages: send a list of 1 to 2,000 messages.")
    if len(raw_messages) > IMPORT_MAX_MESSAGES:
        raise InvalidRequest(
            f"messages: at most {IMPORT_MAX_MESSAGES:,} messages a call; send the rest next."
        )
    now = timezone.now()
    times = _message_times(raw_messages, now)
    messages = validate(raw_messages)
    # System messages are instructions, not history: their times order nothing.
    said = [i for i, m in enumerate(messages) if m["role"] != "system"]
    for before, i in itertools.pairwise(said):
        if times[i] < times[before]:
            raise InvalidRequest(f"messages[{i}].created_at: older than the message before it.")
    kept = [(messages[i], times[i]) for i in said]
    if not kept:
        raise InvalidRequest("messages: only system messages; they are instructions, not history.")
    name = thread or DEFAULT_THREAD
    with transaction.atomic():
        locked = memory_lock(memory)
        newest = thread_newest_at(memory=locked, name=name)
        if newest is not None and kept[0][1] < newest:
            raise InvalidRequest(
                f"messages[{said[0]}].created_at: older than thread '{name}''s newest entry "
                f"({newest.isoformat()}); import a thread's history oldest first."
            )
        row = thread_for_write(memory=locked, name=name, began_at=kept[0][1])
        done = entries_import(
            memory=locked, items=[entry_fields(m) for m, _ in kept], thread=row, stamps=[t for _, t in kept]
        )
        outbox_enqueue(
            memory_id=locked.id,
            project_id=locked.project_id,
            payload={"from_seq": done.first_seq, "to_seq": done.last_seq},
        )
        events.import_completed(locked, {"source": "messages", "accepted": len(kept)}, thread=name)
    return {"accepted": len(kept), "thread": name, "turns": [done.first_turn, done.last_turn]}
