"""decorate (SPEC 4.3): store the new messages and build the full model request.

Nothing here calls a model: it reads the newest rows only, so its cost follows the window,
never the memory's size."""

from __future__ import annotations

import logging

from django.db import transaction

from common import metrics
from common.errors import InvalidRequest
from common.messages import entry_fields, text_of
from common.tokens import text_tokens
from memories.context import context_build
from memories.models import DEFAULT_THREAD, Memory
from memories.selectors import file_index_text, thread_view
from memories.services.entries import entries_append, memory_lock, thread_for_write
from memories.services.turn_store import entries_store_thread_turn, entries_store_turn

log = logging.getLogger("threadless.memories")

MAX_BUDGET = 2_000_000


def split_instructions(messages: list[dict], instructions: str | None) -> tuple[list[dict], str | None]:
    """System messages set the instructions (joined); an explicit `instructions` wins."""
    systems = [text_of(m.get("content")) for m in messages if m["role"] == "system"]
    rest = [m for m in messages if m["role"] != "system"]
    if instructions is None and systems:
        instructions = "\n\n".join(systems)
    return rest, instructions


def memory_decorate(
    *,
    memory: Memory,
    messages: list[dict],
    instructions: str | None = None,
    budget_tokens: int = 60000,
    recall: bool = True,
    store: bool = True,
    scoped: bool = False,
    memory_files: bool = False,
    thread: str | None = None,
) -> dict:
    """Store the new messages and build the full model request (SPEC 4.3). Never calls a model.

    `memory_files`: add an index of the memory's files (Anthropic's memory tool) to the context
    block, so a model without the tool still knows the notes exist (off by default).

    `thread`: the conversation these messages belong to (SPEC 4.10; None: the default thread):
    the window, the failures and the summary are that thread's, facts and recall the memory's.

    `scoped` (with `store`): `memory` is an unread stub (id and project) that the locked read
    scopes, 404 when it is not in the project: one read of the memory row instead of two."""
    if (
        not isinstance(budget_tokens, int)
        or isinstance(budget_tokens, bool)
        or not 1 <= budget_tokens <= MAX_BUDGET
    ):
        raise InvalidRequest(f"budget_tokens: must be an integer from 1 to {MAX_BUDGET}.")
    if instructions is not None and not isinstance(instructions, str):
        raise InvalidRequest("instructions: must be a string.")
    new_messages, instructions = split_instructions(messages, instructions)
    named = thread is not None and thread != DEFAULT_THREAD
    view = None  # the thread as the context builder reads it, when the write did not give it
    if store and named and new_messages and new_messages[0]["role"] == "user":
        # The common decorate in a named thread: the same one statement (three plus the thread's
        # row on SQLite), the thread's row found or created and advanced in it.
        items = [entry_fields(m) for m in new_messages]
        memory, view = entries_store_thread_turn(
            memory=memory,
            thread=thread,
            items=items,
            budget_tokens=budget_tokens,
            instructions=instructions,
            scoped=scoped,
        )
        before_seq = memory.last_seq - len(items) + 1
        turn = view.last_turn
    elif store and named:
        # A named thread's other writes lock the memory row and then find (or create) the thread's.
        with transaction.atomic():
            locked = memory_lock(memory, scoped=scoped)
            view = thread_for_write(memory=locked, name=thread)
            before_seq = locked.last_seq + 1
            view.last_budget_tokens = budget_tokens  # the thread's compaction folds by it
            fields = []
            if instructions is not None and instructions != locked.instructions:
                locked.instructions = instructions
                fields.append("instructions")
            if new_messages:  # saves the thread's row too
                entries_append(
                    memory=locked,
                    items=[entry_fields(m) for m in new_messages],
                    also_save=tuple(fields),
                    thread=view,
                )
            else:
                view.save(update_fields=["last_budget_tokens"])
                if fields:
                    locked.save(update_fields=fields)
            turn = view.last_turn
            memory = locked
    elif store and new_messages and new_messages[0]["role"] == "user":
        # The common decorate: the lock, the rows and the counters without a lock read (one
        # statement on PostgreSQL, atomic in itself; three in one SQLite write transaction).
        items = [entry_fields(m) for m in new_messages]
        memory = entries_store_turn(
            memory=memory, items=items, budget_tokens=budget_tokens, instructions=instructions, scoped=scoped
        )
        before_seq = memory.last_seq - len(items) + 1
        turn = memory.last_turn
    elif store:
        with transaction.atomic():
            locked = memory_lock(memory, scoped=scoped)
            before_seq = locked.last_seq + 1
            fields = ["last_budget_tokens"]
            locked.last_budget_tokens = budget_tokens
            if instructions is not None and instructions != locked.instructions:
                locked.instructions = instructions
                fields.append("instructions")
            if new_messages:  # one UPDATE of the memory row for both
                entries_append(
                    memory=locked, items=[entry_fields(m) for m in new_messages], also_save=tuple(fields)
                )
            else:
                locked.save(update_fields=fields)
            turn = locked.last_turn
            memory = locked
    else:
        before_seq = None
        view = thread_view(memory=memory, name=thread)
        turn = view.last_turn + (1 if any(m["role"] == "user" for m in new_messages) else 0)
    if view is None:
        view = thread_view(memory=memory)
    own = memory.instructions if instructions is None else instructions
    ctx = context_build(
        memory=memory,
        thread=view,
        new_messages=new_messages,
        budget_tokens=budget_tokens,
        recall=recall,
        before_seq=before_seq,
        new_turn=max(turn, 1),
    )
    if memory_files:
        index = file_index_text(memory=memory)
        ctx.context_text = "\n\n".join(t for t in (ctx.context_text, index) if t)
    full_instructions = ctx.instructions_with(own)
    metrics.decorate(window=ctx.history_count, recalled=len(ctx.recalled), facts=len(ctx.facts))
    return {
        "memory_id": memory.id,
        "turn": turn,
        "instructions": full_instructions,
        "context_text": ctx.context_text,
        "messages": ctx.messages,
        "context": {
            "facts": ctx.facts,
            "recalled": ctx.recalled,
            "digests": ctx.digests,
            "summary": ctx.summary,
        },
        "usage": {
            # What the model is sent: the caller's instructions and the context blocks.
            "instructions_tokens": text_tokens(full_instructions),
            "history_tokens": ctx.history_tokens,
            "new_tokens": ctx.new_tokens,
            "dropped_messages": max(0, view.message_count - len(new_messages) - ctx.history_count)
            if store
            else max(0, view.message_count - ctx.history_count),
            "recalled": len(ctx.recalled),
        },
    }
