"""report and failures (SPEC 6.2): store what happened durably and queue its background work
through the outbox in the same transaction, so a broker outage delays it and loses nothing.

`failure_record` is the one implementation of a failed task's leftovers, for reported failures
and for the pipeline's task failures alike."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

import orjson
from django.db import transaction
from django.db.models import F

from common import metrics
from common.causes import innermost_text
from common.errors import InvalidRequest
from common.http.body import reject_unknown
from common.messages import entry_fields
from common.redaction import digest_text, raw_error_text, redact_value
from common.tokens import text_tokens
from memories import events
from memories.models import DEFAULT_THREAD, Entry, ErrorDigest, Memory, Thread
from memories.policy import Policy, failed_action, failure_rules, plain_task_id, policy_parse
from memories.services.entries import entries_append, memory_lock, thread_for_write
from memories.services.outbox import outbox_enqueue, outbox_on_commit
from memories.services.turn_join import messages_join_thread_turn_enqueue, messages_join_turn_enqueue

log = logging.getLogger("threadless.memories")


@dataclass
class FailureResult:
    task_id: str  # without scheme
    text: str  # the digest/taskErrors text
    action: str | None
    task_error: dict | None
    digest: ErrorDigest | None
    entries: list[Entry]


def failure_record(
    *,
    memory: Memory,
    turn: int,
    task_id: str,
    error: str,
    policy: Policy,
    text: str | None = None,
    output: Any = None,
    has_output: bool = False,
    task_type: str = "reported",
    error_type: str = "unknown",
    agent_id: str = "",
    thread: Thread | None = None,
) -> FailureResult:
    """Write what a failed task leaves behind, as the policy's row of SPEC 6.2 says.

    Call inside a transaction with the memory locked. `error` is the raw failure (secrets are
    redacted here); `text` the digest/taskErrors text (built from `error` when not given).
    The caller rolls back the task's own conversation output when `failure_rules(policy)` says so.
    `thread`: a named thread's row (`thread_for_write`), whose turn `turn` is; None, the default.
    """
    rules = failure_rules(policy)
    plain = plain_task_id(task_id)
    # A reported text trace: the most specific part of its cause chain (the last `Caused by:`).
    text = text if text is not None else digest_text(task_id, innermost_text(error))
    raw = raw_error_text(error)
    items: list[dict] = []
    if has_output:
        output = redact_value(output)  # a failing task's output can carry the same secrets as its error
        items.append(
            {
                "kind": "data",
                "key": plain,
                "task_id": plain,
                "value": output,
                "content": raw_error_text(orjson.dumps(output).decode())[:2000],
                "committed": rules.data_committed,
            }
        )
    items.append(
        {
            "kind": "error",
            "task_id": plain,
            "content": raw,
            "committed": rules.data_committed,
            "tokens": text_tokens(raw),
        }
    )
    if rules.digest:
        items.append(
            {
                "kind": "digest",
                "task_id": plain,
                "content": text,
                "committed": True,
                "tokens": text_tokens(text),
            }
        )
    action = failed_action(task_id) if rules.action else None
    if action:
        items.append({"kind": "action", "task_id": plain, "content": action, "committed": True})
    holder = memory if thread is None else thread  # whose turn counters the failures follow
    saved_turn = holder.last_turn
    holder.last_turn = turn  # failures join the given turn
    also_save: tuple[str, ...] = ()
    if turn > saved_turn:  # they open the thread's newest turn (a report of failures only, say)
        holder.turn_start_seq = memory.last_seq + 1
        also_save = ("turn_start_seq",) if thread is None else ()
    entries = entries_append(memory=memory, items=items, also_save=also_save, thread=thread)
    holder.last_turn = max(saved_turn, turn)
    if holder.last_turn != turn:
        type(holder).objects.filter(pk=holder.pk).update(last_turn=holder.last_turn)
    digest = None
    if rules.digest:
        digest_entry = next(e for e in entries if e.kind == "digest")
        digest = ErrorDigest.objects.create(
            memory=memory,
            project_id=memory.project_id,
            entry=digest_entry,
            thread=DEFAULT_THREAD if thread is None else thread.name,
            turn=turn,
            task_id=plain,
            task_type=task_type,
            error_type=error_type,
            agent_id=agent_id,
            text=text,
            raw_error=raw,
        )
        Memory.objects.filter(pk=memory.pk).update(digest_count=F("digest_count") + 1)
        memory.digest_count += 1
        metrics.digest(task_type, error_type)
        events.digest_created(memory, digest)
    task_error = (
        {"type": "errorDigest", "taskId": plain, "taskType": task_type, "text": text}
        if rules.task_error
        else None
    )
    return FailureResult(
        task_id=plain, text=text, action=action, task_error=task_error, digest=digest, entries=entries
    )


# --- report ------------------------------------------------------------------------------------


def validate_failures(raw: Any) -> list[dict]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InvalidRequest("failures: must be a list.")
    out = []
    for i, item in enumerate(raw):
        where = f"failures[{i}]"
        if not isinstance(item, dict):
            raise InvalidRequest(f"{where}: must be an object with task_id and error.")
        reject_unknown(item, {"task_id", "error", "output"}, where)
        task_id = item.get("task_id")
        if not isinstance(task_id, str) or not re.fullmatch(
            r"(?:[a-zA-Z][\w+.-]*://)?[\w.\-]{1,200}", task_id
        ):
            raise InvalidRequest(
                f"{where}.task_id: letters, digits and ._- (optionally with a scheme prefix)."
            )
        error = item.get("error")
        if not isinstance(error, str) or not error.strip():
            raise InvalidRequest(f"{where}.error: must be a non-empty string.")
        out.append(
            {
                "task_id": task_id,
                "error": error[:100_000],
                "output": item.get("output"),
                "has_output": "output" in item,
            }
        )
    return out


def report_accept(
    *,
    memory: Memory,
    messages: list[dict],
    failures: list[dict],
    scoped: bool = False,
    thread: str | None = None,
) -> dict:
    """Store a report durably (messages, failures per policy) and queue its background work.
    They join the newest turn of `thread` (None: the default thread).

    `scoped`: `memory` is an unread stub (id and project): the memory row's first statement
    (the join's UPDATE, or the locked read) scopes it, 404 when it is not in the project."""
    if not messages and not failures:
        raise InvalidRequest("messages: send at least one message or one failure.")
    messages = [m for m in messages if m["role"] != "system"]
    items = [entry_fields(m) for m in messages]
    named = thread is not None and thread != DEFAULT_THREAD
    if items and not failures and all(i["role"] != "user" for i in items):
        # The common report: the counters, the rows and the outbox row, atomically (PostgreSQL:
        # one statement; SQLite: three in one transaction, four in a named thread), no lock read.
        scope = memory.project_id if scoped else None
        queued = (
            messages_join_thread_turn_enqueue(
                memory_id=memory.id, thread=thread, items=items, project_id=scope
            )
            if named
            else messages_join_turn_enqueue(memory_id=memory.id, items=items, project_id=scope)
        )
        if queued is not None:
            outbox_id, _last_seq, turn, _turn_start = queued
            outbox_on_commit(outbox_id)
            return {"accepted": len(items), "turn": turn, "task_errors": []}
    with transaction.atomic():
        locked = memory_lock(memory, scoped=scoped)
        row = thread_for_write(memory=locked, name=thread)
        first_seq = locked.last_seq + 1
        entries = entries_append(memory=locked, items=items, thread=row) if items else []
        turn = (locked if row is None else row).last_turn or 1
        policy = policy_parse(locked.policy)
        task_errors = []
        for failure in failures:
            result = failure_record(
                memory=locked,
                turn=turn,
                task_id=failure["task_id"],
                error=failure["error"],
                policy=policy,
                output=failure["output"],
                has_output=failure["has_output"],
                thread=row,
            )
            if result.task_error:
                task_errors.append(result.task_error)
        # The turn's user message was stored by decorate: process from the turn's start.
        turn_start = (
            Entry.objects.filter(memory=locked, thread=row.name if row else DEFAULT_THREAD, turn=turn)
            .order_by("seq")
            .values_list("seq", flat=True)
            .first()
        )
        outbox_enqueue(
            memory_id=locked.id,
            project_id=locked.project_id,
            payload={"from_seq": min(first_seq, turn_start or first_seq), "to_seq": locked.last_seq},
        )
    return {"accepted": len(entries), "turn": turn, "task_errors": task_errors}
