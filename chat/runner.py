"""The turn runner: one attempt of one turn, task by task, under the memory policy (SPEC 6.2).

* A conversation's turns are those of its thread in its memory (`Conversation.thread`: "default"
  for a memory of its own, or a thread of its subject's shared memory).
* `turn_begin` stores the user's input (it opens the thread's turn, committed, and stays
  committed whatever happens next) and marks the turn IN_PROGRESS with a lease; a second say
  while a turn holds a live lease is a 409. `turn_begin_rerun` starts a new attempt of the last
  turn when it ended ERROR or EXECUTION_INTERRUPTED.
* `turn_execute` runs the workflow. Tasks return what they produced and the runner writes it,
  one transaction per task, so nothing is half-written. A failed task is recorded through
  `memories.services.failure_record` (the one implementation of the 6.2 table); without
  `continueOnFailure` the turn stops ERROR with an empty output.
* Graceful shutdown (`common.shutdown.shutting_down()`) is checked at every task
  boundary and inside streamed model calls; it is never continued past: the turn ends
  EXECUTION_INTERRUPTED and everything this attempt wrote is uncommitted (the input stays).
* Every event is recorded (TurnEvent) so every turn is replayable, and handed to `listener`
  (`chat.bookkeeping.EventLog`, beside the turn's other bookkeeping statements).
* Liveness: a lease renewed by one small thread per process (`chat.leases`); a turn whose lease
  expired reads as EXECUTION_INTERRUPTED (see `selectors.turn_state`).
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from chat.bookkeeping import EventLog, Listener, conversation_state, last_turn_running, turn_finish
from chat.config import policy_of, workflow_of
from chat.leases import lease_deadline, turn_leases
from chat.models import Conversation, TaskRun, TurnEvent
from chat.selectors import snapshot_of
from chat.tasktypes import TaskContext, TaskFailure, TaskInterrupted, runner_for
from common.causes import innermost_message
from common.errors import Conflict, Unavailable
from common.messages import entry_fields
from common.redaction import digest_text, raw_error_text
from common.shutdown import shutting_down
from common.tokens import message_tokens, text_tokens
from memories.models import DEFAULT_THREAD, Entry, Memory, Turn
from memories.policy import failure_rules, plain_task_id
from memories.services import (
    entries_append,
    entries_set_committed,
    failure_record,
    memory_lock,
    outbox_enqueue,
    thread_for_write,
)

log = logging.getLogger("threadless.chat")


class TurnCrashed(Exception):
    """The runner itself failed (not a task): the turn was marked ERROR."""


@dataclass
class TurnHandle:
    conversation_id: str
    memory_id: str
    turn: int
    attempt: int
    input: str
    input_seq: int
    first_event_seq: int
    thread: str = DEFAULT_THREAD


def _next_event_seq(conversation_id: str, turn: int) -> int:
    last = TurnEvent.objects.filter(conversation_id=conversation_id, turn=turn).aggregate(m=Max("seq"))["m"]
    return (last or 0) + 1


Admit = Callable[[Conversation], None]


def turn_begin(*, conversation: Conversation, text: str, admit: Admit | None = None) -> TurnHandle:
    """Store the input and open a turn (409 while another turn on this conversation runs).

    `admit(conversation)`, when given, runs inside the same transaction once the turn may start
    (after the 409 check, before anything is written) and raises to refuse it: the end-user
    concurrency cap and daily budget (`chat.limits`) are checked there, atomically.
    """
    if shutting_down():
        raise Unavailable("The server is shutting down; say again in a moment.", headers={"Retry-After": "2"})
    policy = policy_of(conversation.agent.config)
    name = conversation.thread
    with transaction.atomic():
        memory = memory_lock(conversation.memory)
        running = last_turn_running(memory.id, name)
        if running is not None:
            turn_id, lease_live = running
            if lease_live:
                raise Conflict(
                    "A turn is still running on this conversation.",
                    hint="Wait for its `done` event (or GET the conversation), then say again.",
                )
            Turn.objects.filter(pk=turn_id).update(
                state=Turn.State.EXECUTION_INTERRUPTED, lease_expires_at=None
            )
        if admit is not None:
            admit(conversation)
        also_save = ()
        # A memory of its own carries the agent's policy; a subject's shared memory keeps its own
        # (the turn follows the agent's either way: it is passed to failure_record).
        if conversation.owns_memory and memory.policy != policy.as_json():
            memory.policy = policy.as_json()
            also_save = ("policy",)
        thread = thread_for_write(memory=memory, name=name)
        # The input opens the turn, IN_PROGRESS under its lease from the start (one write).
        entries = entries_append(
            memory=memory,
            items=[entry_fields({"role": "user", "content": text})],
            also_save=also_save,
            turn_state={"state": Turn.State.IN_PROGRESS, "attempt": 1, "lease_expires_at": lease_deadline()},
            thread=thread,
        )
        number = (memory if thread is None else thread).last_turn
        conversation_state(conversation.pk, Turn.State.IN_PROGRESS)
        # A new turn has no events yet: its ids start at 1.
        return TurnHandle(conversation.id, memory.id, number, 1, text, entries[0].seq, 1, thread=name)


def turn_begin_rerun(*, conversation: Conversation, admit: Admit | None = None) -> TurnHandle:
    """A new attempt of the last turn when it ended ERROR or EXECUTION_INTERRUPTED; else 409.

    `admit` as in `turn_begin`."""
    if shutting_down():
        raise Unavailable("The server is shutting down; try again in a moment.", headers={"Retry-After": "2"})
    name = conversation.thread
    with transaction.atomic():
        memory = memory_lock(conversation.memory)
        last = Turn.objects.filter(memory=memory, thread=name).order_by("-number").first()
        state = last.state if last else None
        if last is not None and state == Turn.State.IN_PROGRESS and last.lease_expired:
            state = Turn.State.EXECUTION_INTERRUPTED
        if state not in (Turn.State.ERROR, Turn.State.EXECUTION_INTERRUPTED):
            why = "there is no turn yet" if last is None else f"the last turn ended {state}"
            if state == Turn.State.IN_PROGRESS:
                why = "the last turn is still running"
            raise Conflict(
                f"Nothing to retry: {why}.",
                hint="rerun retries a turn that ended ERROR or EXECUTION_INTERRUPTED.",
            )
        if admit is not None:
            admit(conversation)
        first = (
            Entry.objects.filter(memory=memory, thread=name, turn=last.number, kind="message", role="user")
            .order_by("seq")
            .values_list("seq", flat=True)
            .first()
        )
        # A new attempt replaces the earlier ones: what they left (digests, actions, data, partial
        # replies) leaves the model's view, so a rerun that works shows no failure and no duplicate.
        earlier = list(
            Entry.objects.filter(memory=memory, thread=name, turn=last.number, committed=True)
            .exclude(kind="message", role="user")
            .values_list("id", flat=True)
        )
        entries_set_committed(memory=memory, entry_ids=earlier, committed=False)
        last.attempt += 1
        last.state = Turn.State.IN_PROGRESS
        last.actions, last.task_errors, last.output = [], [], []
        last.lease_expires_at = lease_deadline()
        last.finished_at = None
        last.save(
            update_fields=[
                "attempt",
                "state",
                "actions",
                "task_errors",
                "output",
                "lease_expires_at",
                "finished_at",
            ]
        )
        Conversation.objects.filter(pk=conversation.pk).update(
            state=Turn.State.IN_PROGRESS, updated_at=timezone.now()
        )
        return TurnHandle(
            conversation.id,
            memory.id,
            last.number,
            last.attempt,
            last.input,
            first or memory.last_seq + 1,
            _next_event_seq(conversation.id, last.number),
            thread=name,
        )


def turn_execute(
    *,
    handle: TurnHandle,
    stream: bool = False,
    listener: Listener | None = None,
    request_id: str = "",
    conversation: Conversation | None = None,
) -> dict:
    """Run one attempt of a begun turn to its end; returns the (project-key) turn snapshot."""
    if conversation is None or conversation.pk != handle.conversation_id:
        conversation = Conversation.objects.select_related("agent", "memory").get(pk=handle.conversation_id)
    events = EventLog(
        conversation_id=handle.conversation_id,
        turn=handle.turn,
        attempt=handle.attempt,
        first_seq=handle.first_event_seq,
        listener=listener,
    )
    lease = turn_leases.hold(handle.memory_id, handle.turn, handle.thread)
    started = time.monotonic()
    try:
        state, actions, output, task_errors, runs = _run_tasks(conversation, handle, events, stream)
    except Exception as exc:
        turn_leases.release(lease)
        log.error(
            "turn %s/%s crashed (request %s)",
            handle.conversation_id,
            handle.turn,
            request_id or "-",
            exc_info=True,
        )
        Turn.objects.filter(memory_id=handle.memory_id, thread=handle.thread, number=handle.turn).update(
            state=Turn.State.ERROR, lease_expires_at=None, finished_at=timezone.now()
        )
        Conversation.objects.filter(pk=handle.conversation_id).update(state=Turn.State.ERROR)
        events.emit("error", {"message": "Something went wrong on our side.", "requestId": request_id})
        events.flush()
        raise TurnCrashed(str(exc)) from exc
    turn_leases.release(lease)
    duration = int((time.monotonic() - started) * 1000)
    snapshot = snapshot_of(
        conversation_id=handle.conversation_id,
        turn=handle.turn,
        state=state,
        output=output,
        actions=actions,
        task_errors=task_errors,
    )
    # The turn's end is one transaction (task runs, state, the last events, the background work on
    # what it stored: facts, recall, compaction); the last events are delivered after it commits,
    # so a client that sees `done` reads the finished turn.
    final = [
        events.emit("output", {"items": output}, deliver=False),
        events.emit("done", {"snapshot": snapshot}, deliver=False),
    ]
    with transaction.atomic():
        TaskRun.objects.bulk_create(runs)
        turn_finish(
            memory_id=handle.memory_id,
            thread=handle.thread,
            number=handle.turn,
            state=state,
            actions=actions,
            output=output,
            task_errors=task_errors,
            duration_ms=duration,
        )
        conversation_state(handle.conversation_id, state)
        events.flush()
        _background_enqueue(handle)
    for event in final:
        events.deliver(event)
    return snapshot


def _background_enqueue(handle: TurnHandle) -> None:
    """Queue the memory's background work over the turn's entries (as report does), in the
    caller's transaction: what the user said here becomes facts every thread of the memory sees."""
    last_seq, project_id = (
        Memory.objects.filter(pk=handle.memory_id).values_list("last_seq", "project_id").get()
    )
    outbox_enqueue(
        memory_id=handle.memory_id,
        project_id=project_id,
        payload={"from_seq": handle.input_seq, "to_seq": last_seq},
    )


def _store(memory, thread: str, items: list[dict]) -> list[int]:
    with transaction.atomic():
        locked = memory_lock(memory)
        row = thread_for_write(memory=locked, name=thread)
        return [e.id for e in entries_append(memory=locked, items=items, thread=row)]


def _run_tasks(conversation: Conversation, handle: TurnHandle, events: EventLog, stream: bool):
    agent = conversation.agent
    policy = policy_of(agent.config)
    rules = failure_rules(policy)
    continuing = policy.enabled and policy.continue_on_failure
    memory = conversation.memory
    actions: list[str] = []
    output: list[dict] = []
    task_errors: list[dict] = []
    written: list[int] = []
    replied: list[tuple[str, list[int]]] = []  # (task, its stored reply messages) of tasks that answered
    runs: list[TaskRun] = []
    failed = interrupted = answered_after_failure = False
    ctx = TaskContext(
        memory=memory,
        thread=handle.thread,
        project_id=conversation.project_id,
        agent_id=agent.id,
        turn=handle.turn,
        attempt=handle.attempt,
        input=handle.input,
        input_seq=handle.input_seq,
        stream=stream,
        actions=actions,
        emit=events.emit,
        should_stop=shutting_down,
    )
    events.emit(
        "turn_start", {"conversationId": conversation.id, "turn": handle.turn, "attempt": handle.attempt}
    )

    def run_row(task: dict, status: str, ms: int = 0, **extra) -> TaskRun:
        return TaskRun(
            conversation=conversation,
            turn=handle.turn,
            attempt=handle.attempt,
            task_id=plain_task_id(task["id"]),
            task_type=task["type"],
            status=status,
            duration_ms=ms,
            **extra,
        )

    for task in workflow_of(agent.config):
        if shutting_down():
            interrupted = True
            break
        plain, kind = plain_task_id(task["id"]), task["type"]
        if task.get("actions") and not set(task["actions"]) & set(actions):
            runs.append(run_row(task, TaskRun.Status.SKIPPED))
            continue
        events.emit("task_start", {"taskId": plain, "taskType": kind})
        began = time.monotonic()
        try:
            result = runner_for(kind).run(ctx, task)
        except TaskInterrupted as exc:
            ms = int((time.monotonic() - began) * 1000)
            if exc.partial:
                written += _store(
                    memory,
                    handle.thread,
                    [
                        {
                            "kind": "message",
                            "role": "assistant",
                            "content": exc.partial,
                            "committed": False,
                            "tokens": text_tokens(exc.partial),
                        }
                    ],
                )
                events.emit("rollback", {"taskId": plain})
            runs.append(run_row(task, TaskRun.Status.INTERRUPTED, ms, error_type="interrupted"))
            interrupted = True
            break
        except Exception as exc:  # noqa: BLE001 - TaskFailure, or a bug in a task: both are that task's failure
            ms = int((time.monotonic() - began) * 1000)
            if not isinstance(exc, TaskFailure):
                log.error("task %s (%s) raised", plain, kind, exc_info=True)
                exc = TaskFailure(
                    f"{kind} task failed: {innermost_message(exc, default='internal error')}",
                    error_type="unknown",
                    raw=raw_error_text("".join(traceback.format_exception(exc))),
                )
            text = digest_text(task["id"], exc.reason)
            with transaction.atomic():
                locked = memory_lock(memory)
                thread = thread_for_write(memory=locked, name=handle.thread)
                if exc.partial:
                    # The failed task's own conversation output: kept or rolled back as 6.2 says.
                    ids = [
                        e.id
                        for e in entries_append(
                            memory=locked,
                            items=[
                                {
                                    "kind": "message",
                                    "role": "assistant",
                                    "content": exc.partial,
                                    "task_id": plain,
                                    "tokens": message_tokens({"content": exc.partial}),
                                }
                            ],
                            thread=thread,
                        )
                    ]
                    if not rules.keep_output:
                        entries_set_committed(memory=locked, entry_ids=ids, committed=False)
                    written += ids
                result = failure_record(
                    memory=locked,
                    turn=handle.turn,
                    task_id=task["id"],
                    error=exc.raw,
                    policy=policy,
                    text=text,
                    output=exc.output,
                    has_output=exc.has_output,
                    task_type=kind,
                    error_type=exc.error_type,
                    agent_id=agent.id,
                    thread=thread,
                )
                written += [e.id for e in result.entries]
            runs.append(
                run_row(
                    task,
                    TaskRun.Status.FAILED,
                    ms,
                    error_type=exc.error_type,
                    error_text=text[:250],
                    raw_error=raw_error_text(exc.raw),
                )
            )
            if result.action and result.action not in actions:
                actions.append(result.action)
            if result.task_error:
                task_errors.append(result.task_error)
            events.emit(
                "task_failed",
                {
                    "taskId": plain,
                    "taskType": kind,
                    "durationMs": ms,
                    "errorType": exc.error_type,
                    "error": text if rules.task_error else None,
                },
            )
            if exc.partial:
                # What it streamed is not part of the reply (and, under strict write, not in memory).
                events.emit("rollback", {"taskId": plain})
            failed = True
            if continuing:
                continue
            break
        ms = int((time.monotonic() - began) * 1000)
        items = list(result.entries)
        new_actions = [a for a in result.actions if a not in actions]
        items += [{"kind": "action", "task_id": plain, "content": a} for a in new_actions]
        if items:
            ids = _store(memory, handle.thread, items)
            written += ids
            if result.output:
                replied.append(
                    (
                        plain,
                        [
                            i
                            for i, item in zip(ids, items, strict=True)
                            if item["kind"] == "message" and item.get("role") == "assistant"
                        ],
                    )
                )
        actions.extend(new_actions)
        ctx.turn_data.extend(
            {"key": e["key"], "value": e.get("value")} for e in result.entries if e["kind"] == "data"
        )
        output.extend(result.output)
        if failed and result.output:
            answered_after_failure = True
        runs.append(run_row(task, TaskRun.Status.OK, ms))
        events.emit("task_end", {"taskId": plain, "durationMs": ms})

    if interrupted:
        # Never continued past: nothing this attempt wrote stays committed; the input does.
        with transaction.atomic():
            locked = memory_lock(memory)
            entries_set_committed(memory=locked, entry_ids=written, committed=False)
        for plain, _ids in replied:
            events.emit("rollback", {"taskId": plain})
        return Turn.State.EXECUTION_INTERRUPTED, actions, [], task_errors, runs
    if failed:
        if continuing and answered_after_failure:
            return Turn.State.READY, actions, output, task_errors, runs
        if not continuing and replied:
            # The reply is dropped, so earlier tasks' answers never reach the caller: they leave the
            # model's view too, and a streaming page is told to take their text down.
            with transaction.atomic():
                locked = memory_lock(memory)
                entries_set_committed(
                    memory=locked, entry_ids=[i for _, ids in replied for i in ids], committed=False
                )
            for plain, _ids in replied:
                events.emit("rollback", {"taskId": plain})
        return Turn.State.ERROR, actions, output if continuing else [], task_errors, runs
    return Turn.State.READY, actions, output, task_errors, runs
