"""Writes: projects, keys, memories, decorate, report, failures, facts and the outbox.

Nothing here calls a model. decorate stores the new messages and builds the request from the
newest rows only; report stores durably and queues background work through the outbox in the
same transaction, so a broker outage delays it and loses nothing.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import orjson
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from threadless.window import message_tokens, text_quarters

from memories import keys
from memories.causes import innermost_text
from memories.context import context_build
from memories.errors import InvalidRequest, NotFound, QuotaExceeded
from memories.messages import entry_fields, text_of
from memories.models import (
    ApiCall,
    ApiKey,
    Entry,
    ErrorDigest,
    Fact,
    FactTombstone,
    IdempotencyRecord,
    Memory,
    Outbox,
    Project,
    Turn,
)
from memories.policy import Policy, failed_action, failure_rules, plain_task_id, policy_parse
from memories.redaction import digest_text, echo, raw_error_text, redact_value

log = logging.getLogger("threadless.memories")

_UNSET: Any = object()
MAX_BUDGET = 2_000_000


# --- projects and keys -------------------------------------------------------------------------


def project_create(*, name: str, rate_limit_per_minute: int | None = None,
                   allowance_requests_per_month: int | None = None,
                   allowance_memories: int | None = None) -> Project:
    if not name.strip():
        raise InvalidRequest("name: must not be empty.")
    return Project.objects.create(
        name=name.strip()[:200],
        rate_limit_per_minute=rate_limit_per_minute,
        allowance_requests_per_month=allowance_requests_per_month,
        allowance_memories=allowance_memories,
    )


def key_create(*, project: Project, kind: str = "project", agent_id: str = "", name: str = "") -> tuple[ApiKey, str]:
    """Create a key; the plaintext is returned here once and never stored."""
    if kind not in keys.KIND_PREFIX:
        raise InvalidRequest("kind: must be 'project' or 'publishable'.")
    if kind == "publishable" and not agent_id:
        raise InvalidRequest("agent: a publishable key belongs to one agent.")
    plaintext, visible, lookup, hashed = keys.generate(kind)
    key = ApiKey.objects.create(
        project=project, kind=kind, agent_id=agent_id if kind == "publishable" else "", name=name[:200],
        prefix=visible, lookup=lookup, hashed=hashed,
    )
    return key, plaintext


def key_revoke(*, prefix: str, project: Project | None = None) -> ApiKey:
    qs = ApiKey.objects.filter(prefix=prefix)
    if project is not None:
        qs = qs.filter(project=project)
    key = qs.first()
    if key is None:
        raise NotFound(f"No key with prefix '{prefix}'.")
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
    return key


def usage_count(*, project: Project, operation: str) -> None:
    """Per-day volume for the console (atomic increment)."""
    day = timezone.now().date()
    if not ApiCall.objects.filter(project=project, day=day, operation=operation).update(count=F("count") + 1):
        try:
            with transaction.atomic():
                ApiCall.objects.create(project=project, day=day, operation=operation, count=1)
        except IntegrityError:
            ApiCall.objects.filter(project=project, day=day, operation=operation).update(count=F("count") + 1)


# --- memories ----------------------------------------------------------------------------------


def _check_metadata(metadata: Any) -> dict:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidRequest("metadata: must be an object.")
    if len(orjson.dumps(metadata)) > 16_384:
        raise InvalidRequest("metadata: at most 16 KiB of JSON.")
    return metadata


def memory_create(*, project: Project, metadata: dict | None = None, external_id: str | None = None,
                  instructions: str = "", policy: dict | None = None) -> tuple[Memory, bool]:
    """Create a memory, or return the existing one for an `external_id` (get-or-create)."""
    if external_id is not None:
        existing = Memory.objects.filter(project=project, external_id=external_id).first()
        if existing is not None:
            return existing, False
    metadata = _check_metadata(metadata)
    parsed = policy_parse(policy)
    if project.allowance_memories is not None:
        if Memory.objects.filter(project=project).count() >= project.allowance_memories:
            raise QuotaExceeded(f"The plan's allowance of {project.allowance_memories} memories is used up.")
    try:
        with transaction.atomic():
            memory = Memory.objects.create(
                project=project, metadata=metadata, external_id=external_id,
                instructions=instructions or "", policy=parsed.as_json(),
            )
    except IntegrityError:
        existing = Memory.objects.filter(project=project, external_id=external_id).first()
        if existing is None:
            raise
        return existing, False
    return memory, True


def memory_update(*, memory: Memory, metadata: Any = _UNSET, instructions: Any = _UNSET,
                  policy: Any = _UNSET) -> Memory:
    fields = ["updated_at"]
    if metadata is not _UNSET:
        memory.metadata = _check_metadata(metadata)
        fields.append("metadata")
    if instructions is not _UNSET:
        memory.instructions = instructions or ""
        fields.append("instructions")
    if policy is not _UNSET:
        memory.policy = policy_parse(policy).as_json()
        fields.append("policy")
    memory.save(update_fields=fields)
    return memory


def _receipt_for(memory_ids: list[str]) -> dict[str, int]:
    from memories import recall

    receipt = {
        "memories": len(memory_ids),
        "entries": Entry.objects.filter(memory_id__in=memory_ids).count(),
        "turns": Turn.objects.filter(memory_id__in=memory_ids).count(),
        "facts": Fact.objects.filter(memory_id__in=memory_ids).count(),
        "digests": ErrorDigest.objects.filter(memory_id__in=memory_ids).count(),
        "summaries": Memory.objects.filter(id__in=memory_ids).exclude(summary="").count(),
        "outbox": Outbox.objects.filter(memory_id__in=memory_ids).count(),
        "fact_tombstones": FactTombstone.objects.filter(memory_id__in=memory_ids).count(),
        "index_rows": 0,
    }
    for memory_id in memory_ids:
        receipt["index_rows"] += recall.forget_memory(memory_id=memory_id)
    return receipt


def _delete_memories(memory_ids: list[str]) -> dict[str, int]:
    with transaction.atomic():
        # Lock the rows first, so background work on them waits and then finds them gone.
        memory_ids = list(Memory.objects.select_for_update().filter(id__in=memory_ids).values_list("id", flat=True))
        receipt = _receipt_for(memory_ids)
        # Children first, in bulk: a memory can have many entries.
        ErrorDigest.objects.filter(memory_id__in=memory_ids).delete()
        Entry.objects.filter(memory_id__in=memory_ids).delete()
        Fact.objects.filter(memory_id__in=memory_ids).update(superseded_by=None)
        for model in (Turn, Fact, FactTombstone, Outbox):
            model.objects.filter(memory_id__in=memory_ids).delete()
        Memory.objects.filter(id__in=memory_ids).delete()
    log.info("deleted memories %s: %s", ",".join(memory_ids[:20]), receipt)
    return receipt


def memory_delete(*, memory: Memory) -> dict[str, int]:
    return _delete_memories([memory.id])


def memory_delete_matching(*, project: Project, metadata: dict | None = None,
                           external_id: str | None = None) -> dict[str, int]:
    if not metadata and external_id is None:
        raise InvalidRequest("filter: give at least one metadata.<key>=<value> or external_id.")
    from memories.selectors import memory_list

    ids = list(memory_list(project=project, external_id=external_id, metadata=metadata).values_list("id", flat=True))
    return _delete_memories(ids) if ids else {
        "memories": 0, "entries": 0, "turns": 0, "facts": 0, "digests": 0, "summaries": 0, "outbox": 0,
        "fact_tombstones": 0, "index_rows": 0,
    }


def retention_enforce() -> dict[str, int]:
    """Forget memories unused for longer than their project's `retention_days` (periodic task)."""
    totals: dict[str, int] = {}
    now = timezone.now()
    for project_id, days in Project.objects.filter(retention_days__gt=0).values_list("id", "retention_days"):
        cutoff = now - timedelta(days=days)
        while True:
            ids = list(Memory.objects.filter(project_id=project_id, last_used_at__lt=cutoff)
                       .order_by("last_used_at").values_list("id", flat=True)[:200])
            if not ids:
                break
            for kind, n in _delete_memories(ids).items():
                totals[kind] = totals.get(kind, 0) + n
    if totals:
        log.info("retention forgot %s", totals)
    return totals


# --- writing entries ---------------------------------------------------------------------------


def _locked(memory: Memory) -> Memory:
    return Memory.objects.select_for_update().get(pk=memory.pk)


def entries_append(*, memory: Memory, items: list[dict], turn_input: str | None = None) -> list[Entry]:
    """Append entries to a locked memory (call inside a transaction, with `_locked`).

    Each user message opens a new turn; everything else joins the newest turn. Updates the
    memory's sequence, turn and count columns.
    """
    now = timezone.now()
    entries: list[Entry] = []
    new_turns: list[Turn] = []
    seq, turn = memory.last_seq, memory.last_turn
    messages = tokens = 0
    for item in items:
        if item.get("kind") == "message" and item.get("role") == "user" or turn == 0:
            turn += 1
            text = item.get("content", "") if item.get("role") == "user" else ""
            new_turns.append(Turn(memory=memory, number=turn, input=turn_input if turn_input is not None else text))
        seq += 1
        entry = Entry(memory=memory, seq=seq, turn=turn, created_at=now, **item)
        entries.append(entry)
        if entry.kind == "message" and entry.committed:
            messages += 1
            tokens += entry.tokens
    if new_turns:
        Turn.objects.bulk_create(new_turns)
    Entry.objects.bulk_create(entries)
    memory.last_seq, memory.last_turn = seq, turn
    memory.message_count += messages
    memory.token_count += tokens
    memory.last_used_at = now
    memory.save(update_fields=["last_seq", "last_turn", "message_count", "token_count", "last_used_at", "updated_at"])
    return entries


def entries_set_committed(*, memory: Memory, entry_ids: list[int], committed: bool) -> int:
    """Flip commit flags (the pipeline's rollback) and keep the memory's counts in step."""
    rows = list(Entry.objects.filter(memory=memory, id__in=entry_ids).exclude(committed=committed)
                .values_list("id", "kind", "tokens"))
    if not rows:
        return 0
    Entry.objects.filter(id__in=[r[0] for r in rows]).update(committed=committed)
    # Keep the recall index in step: uncommitted messages must not be findable.
    from memories import recall

    recall.index_entries(memory_id=memory.id, entry_ids=[r[0] for r in rows if r[1] == "message"])
    sign = 1 if committed else -1
    msg = [r for r in rows if r[1] == "message"]
    if msg:
        Memory.objects.filter(pk=memory.pk).update(
            message_count=F("message_count") + sign * len(msg),
            token_count=F("token_count") + sign * sum(r[2] for r in msg),
        )
    return len(rows)


# --- idempotency -------------------------------------------------------------------------------


def idempotent_replay(*, project: Project, scope: str, key: str | None) -> tuple[int, bytes] | None:
    if not key:
        return None
    cutoff = timezone.now() - timedelta(hours=settings.THREADLESS_IDEMPOTENCY_HOURS)
    record = IdempotencyRecord.objects.filter(project=project, scope=scope, key=key, created_at__gte=cutoff).first()
    return (record.status, bytes(record.body)) if record else None


def idempotent_store(*, project: Project, scope: str, key: str | None, status: int, body: bytes) -> None:
    if not key:
        return
    cutoff = timezone.now() - timedelta(hours=settings.THREADLESS_IDEMPOTENCY_HOURS)
    IdempotencyRecord.objects.filter(project=project, scope=scope, key=key, created_at__lt=cutoff).delete()
    IdempotencyRecord.objects.create(project=project, scope=scope, key=key, status=status, body=body)


def idempotent_call(*, project: Project, memory: Memory, scope: str, key: str | None,
                    run: Callable[[], tuple[int, bytes, bool]]) -> tuple[int, bytes]:
    """Run a write once per Idempotency-Key: the replay check, the write and the record are one
    transaction on the locked memory, so a retry racing the first call waits for it and replays
    its answer instead of storing twice. `run` returns (status, body, record?)."""
    if not key:
        status, body, _record = run()
        return status, body
    with transaction.atomic():
        _locked(memory)
        replay = idempotent_replay(project=project, scope=scope, key=key)
        if replay:
            return replay
        status, body, record = run()
        if record:
            idempotent_store(project=project, scope=scope, key=key, status=status, body=body)
        return status, body


def check_idempotency_key(key: str | None) -> str | None:
    if key is None:
        return None
    if not (1 <= len(key) <= 200) or not key.isprintable():
        raise InvalidRequest("Idempotency-Key: 1 to 200 printable characters.")
    return key


# --- decorate ----------------------------------------------------------------------------------


def split_instructions(messages: list[dict], instructions: str | None) -> tuple[list[dict], str | None]:
    """System messages set the instructions (joined); an explicit `instructions` wins."""
    systems = [text_of(m.get("content")) for m in messages if m["role"] == "system"]
    rest = [m for m in messages if m["role"] != "system"]
    if instructions is None and systems:
        instructions = "\n\n".join(systems)
    return rest, instructions


def memory_decorate(*, memory: Memory, messages: list[dict], instructions: str | None = None,
                    budget_tokens: int = 60000, recall: bool = True, store: bool = True) -> dict:
    """Store the new messages and build the full model request (SPEC 4.3). Never calls a model."""
    if not isinstance(budget_tokens, int) or isinstance(budget_tokens, bool) or not 1 <= budget_tokens <= MAX_BUDGET:
        raise InvalidRequest(f"budget_tokens: must be an integer from 1 to {MAX_BUDGET}.")
    if instructions is not None and not isinstance(instructions, str):
        raise InvalidRequest("instructions: must be a string.")
    new_messages, instructions = split_instructions(messages, instructions)
    if store:
        with transaction.atomic():
            locked = _locked(memory)
            before_seq = locked.last_seq + 1
            fields = ["last_budget_tokens"]
            locked.last_budget_tokens = budget_tokens
            if instructions is not None and instructions != locked.instructions:
                locked.instructions = instructions
                fields.append("instructions")
            locked.save(update_fields=fields)
            if new_messages:
                entries_append(memory=locked, items=[entry_fields(m) for m in new_messages])
            turn = locked.last_turn
            memory = locked
    else:
        before_seq = None
        turn = memory.last_turn + (1 if any(m["role"] == "user" for m in new_messages) else 0)
    own = memory.instructions if instructions is None else instructions
    ctx = context_build(memory=memory, new_messages=new_messages, budget_tokens=budget_tokens, recall=recall,
                        before_seq=before_seq, new_turn=max(turn, 1))
    full_instructions = ctx.instructions_with(own)
    return {
        "memory_id": memory.id,
        "turn": turn,
        "instructions": full_instructions,
        "context_text": ctx.context_text,
        "messages": ctx.messages,
        "context": {"facts": ctx.facts, "recalled": ctx.recalled, "digests": ctx.digests, "summary": ctx.summary},
        "usage": {
            # What the model is sent: the caller's instructions and the context blocks.
            "instructions_tokens": (text_quarters(full_instructions) + 3) // 4,
            "history_tokens": ctx.history_tokens,
            "new_tokens": ctx.new_tokens,
            "dropped_messages": max(0, memory.message_count - len(new_messages) - ctx.history_count) if store
            else max(0, memory.message_count - ctx.history_count),
            "recalled": len(ctx.recalled),
        },
    }


# --- failures (SPEC 6.2) -----------------------------------------------------------------------


@dataclass
class FailureResult:
    task_id: str  # without scheme
    text: str  # the digest/taskErrors text
    action: str | None
    task_error: dict | None
    digest: ErrorDigest | None
    entries: list[Entry]


def failure_record(*, memory: Memory, turn: int, task_id: str, error: str, policy: Policy,
                   text: str | None = None, output: Any = None, has_output: bool = False,
                   task_type: str = "reported", error_type: str = "unknown", agent_id: str = "") -> FailureResult:
    """Write what a failed task leaves behind, as the policy's row of SPEC 6.2 says.

    Call inside a transaction with the memory locked. `error` is the raw failure (secrets are
    redacted here); `text` the digest/taskErrors text (built from `error` when not given).
    The caller rolls back the task's own conversation output when `failure_rules(policy)` says so.
    """
    rules = failure_rules(policy)
    plain = plain_task_id(task_id)
    # A reported text trace: the most specific part of its cause chain (the last `Caused by:`).
    text = text if text is not None else digest_text(task_id, innermost_text(error))
    raw = raw_error_text(error)
    items: list[dict] = []
    if has_output:
        output = redact_value(output)  # a failing task's output can carry the same secrets as its error
        items.append({"kind": "data", "key": plain, "task_id": plain, "value": output,
                      "content": raw_error_text(orjson.dumps(output).decode())[:2000],
                      "committed": rules.data_committed})
    items.append({"kind": "error", "task_id": plain, "content": raw, "committed": rules.data_committed,
                  "tokens": (len(raw) + 3) // 4})
    if rules.digest:
        items.append({"kind": "digest", "task_id": plain, "content": text, "committed": True,
                      "tokens": (len(text) + 3) // 4})
    action = failed_action(task_id) if rules.action else None
    if action:
        items.append({"kind": "action", "task_id": plain, "content": action, "committed": True})
    saved_turn = memory.last_turn
    memory.last_turn = turn  # failures join the given turn
    entries = entries_append(memory=memory, items=items)
    memory.last_turn = max(saved_turn, turn)
    if memory.last_turn != turn:
        Memory.objects.filter(pk=memory.pk).update(last_turn=memory.last_turn)
    digest = None
    if rules.digest:
        digest_entry = next(e for e in entries if e.kind == "digest")
        digest = ErrorDigest.objects.create(
            memory=memory, project_id=memory.project_id, entry=digest_entry, turn=turn, task_id=plain,
            task_type=task_type, error_type=error_type, agent_id=agent_id, text=text, raw_error=raw,
        )
        Memory.objects.filter(pk=memory.pk).update(digest_count=F("digest_count") + 1)
        memory.digest_count += 1
    task_error = {"type": "errorDigest", "taskId": plain, "taskType": task_type, "text": text} if rules.task_error else None
    return FailureResult(task_id=plain, text=text, action=action, task_error=task_error, digest=digest, entries=entries)


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
        unknown = set(item) - {"task_id", "error", "output"}
        if unknown:
            raise InvalidRequest(f"{where}.{echo(sorted(unknown)[0])}: unknown field.")
        task_id = item.get("task_id")
        if not isinstance(task_id, str) or not re.fullmatch(r"(?:[a-zA-Z][\w+.-]*://)?[\w.\-]{1,200}", task_id):
            raise InvalidRequest(f"{where}.task_id: letters, digits and ._- (optionally with a scheme prefix).")
        error = item.get("error")
        if not isinstance(error, str) or not error.strip():
            raise InvalidRequest(f"{where}.error: must be a non-empty string.")
        out.append({"task_id": task_id, "error": error[:100_000], "output": item.get("output"),
                    "has_output": "output" in item})
    return out


def report_accept(*, memory: Memory, messages: list[dict], failures: list[dict]) -> dict:
    """Store a report durably (messages, failures per policy) and queue its background work."""
    if not messages and not failures:
        raise InvalidRequest("messages: send at least one message or one failure.")
    messages = [m for m in messages if m["role"] != "system"]
    with transaction.atomic():
        locked = _locked(memory)
        first_seq = locked.last_seq + 1
        entries = entries_append(memory=locked, items=[entry_fields(m) for m in messages]) if messages else []
        turn = locked.last_turn or 1
        policy = policy_parse(locked.policy)
        task_errors = []
        for failure in failures:
            result = failure_record(memory=locked, turn=turn, task_id=failure["task_id"], error=failure["error"],
                                    policy=policy, output=failure["output"], has_output=failure["has_output"])
            if result.task_error:
                task_errors.append(result.task_error)
        # The turn's user message was stored by decorate: process from the turn's start.
        turn_start = (Entry.objects.filter(memory=locked, turn=turn).order_by("seq")
                      .values_list("seq", flat=True).first())
        outbox_enqueue(memory=locked, payload={"from_seq": min(first_seq, turn_start or first_seq),
                                               "to_seq": locked.last_seq})
    return {"accepted": len(entries), "turn": turn, "task_errors": task_errors}


# --- outbox ------------------------------------------------------------------------------------


def outbox_enqueue(*, memory: Memory, payload: dict, kind: str = "report") -> Outbox:
    row = Outbox.objects.create(memory=memory, kind=kind, payload=payload)
    transaction.on_commit(lambda: outbox_publish(outbox_id=row.id))
    return row


def outbox_publish(*, outbox_id: int) -> bool:
    """Hand a row to the broker. A broker outage is logged, not raised: the sweep re-queues it."""
    from memories.tasks import process_outbox

    try:
        process_outbox.apply_async(args=[outbox_id], retry=False)
        return True
    except Exception as exc:  # noqa: BLE001 - any broker failure; the row stays for the sweep
        log.warning("outbox %s not queued (%s); the sweep will retry", outbox_id, exc.__class__.__name__)
        return False


def outbox_claim(*, outbox_id: int) -> Outbox | None:
    """Claim a row for processing: unclaimed, or claimed so long ago that its worker died."""
    from django.db.models import Q

    now = timezone.now()
    stale = now - timedelta(seconds=settings.THREADLESS_OUTBOX_STALE_SECONDS)
    claimed = (
        Outbox.objects.filter(id=outbox_id, processed_at=None)
        .filter(Q(claimed_at__isnull=True) | Q(claimed_at__lt=stale))
        .update(claimed_at=now, attempts=F("attempts") + 1)
    )
    return Outbox.objects.filter(id=outbox_id).first() if claimed else None


def outbox_process(*, outbox_id: int) -> bool:
    """Run one outbox row's background work exactly once (idempotent steps, claimed row)."""
    from memories.background import process_entries

    row = outbox_claim(outbox_id=outbox_id)
    if row is None:
        return False
    process_entries(memory_id=row.memory_id, from_seq=row.payload.get("from_seq", 1),
                    to_seq=row.payload.get("to_seq", 0))
    Outbox.objects.filter(id=row.id, processed_at=None).update(processed_at=timezone.now(), last_error="")
    return True


def outbox_sweep() -> int:
    """Re-queue rows never picked up and rows whose claim went stale (a worker died mid-job)."""
    from django.db.models import Q

    now = timezone.now()
    stale = now - timedelta(seconds=settings.THREADLESS_OUTBOX_STALE_SECONDS)
    waiting = now - timedelta(seconds=max(5, settings.THREADLESS_OUTBOX_SWEEP_SECONDS))
    ids = list(
        Outbox.objects.filter(processed_at=None)
        .filter(Q(claimed_at__isnull=True, created_at__lt=waiting) | Q(claimed_at__lt=stale))
        .order_by("id")
        .values_list("id", flat=True)[:500]
    )
    for outbox_id in ids:
        outbox_publish(outbox_id=outbox_id)
    return len(ids)


# --- facts -------------------------------------------------------------------------------------


def fact_normalize(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", "", text.lower())).strip()[:500]


def _fact_text(text: Any) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidRequest("text: must be a non-empty string.")
    if len(text) > 2000:
        raise InvalidRequest("text: at most 2,000 characters.")
    return re.sub(r"\s+", " ", text).strip()


def fact_create(*, memory: Memory, text: str, slot: str = "", extractor: str = "api",
                source_entry_ids: list[int] | None = None, confidence: float = 1.0) -> tuple[Fact, bool]:
    """Add a fact; an active fact with the same normalised text is returned instead (no duplicate)."""
    text = _fact_text(text)
    normalized = fact_normalize(text)
    existing = Fact.objects.filter(memory=memory, active=True, normalized=normalized).first()
    if existing is not None:
        return existing, False
    fact = Fact.objects.create(
        memory=memory, text=text, normalized=normalized, slot=slot[:100], extractor=extractor,
        source_entry_ids=source_entry_ids or [], confidence=confidence,
        tokens=message_tokens({"content": text}) - 2,
    )
    return fact, True


def fact_update(*, fact: Fact, text: str, extractor: str = "api") -> Fact:
    """A person's edit: it wins over extraction, which must never bring the old text back."""
    from memories.facts.store import tombstone_add

    text = _fact_text(text)
    if fact_normalize(text) != fact.normalized:
        tombstone_add(fact=fact)
    fact.text = text
    fact.normalized = fact_normalize(text)
    fact.extractor = extractor
    fact.tokens = message_tokens({"content": text}) - 2
    fact.save(update_fields=["text", "normalized", "extractor", "tokens", "updated_at"])
    return fact


def fact_delete(*, fact: Fact) -> dict[str, int]:
    """Forget a fact and the history it replaced; tombstones keep extraction from re-adding them."""
    from memories.facts.store import tombstone_add

    with transaction.atomic():
        chain, frontier = [fact], [fact.pk]
        while frontier:
            older = list(Fact.objects.filter(superseded_by_id__in=frontier).exclude(pk__in=[f.pk for f in chain]))
            chain.extend(older)
            frontier = [f.pk for f in older]
        for item in chain:
            tombstone_add(fact=item)
        Fact.objects.filter(pk__in=[f.pk for f in chain]).update(superseded_by=None)
        deleted = Fact.objects.filter(pk__in=[f.pk for f in chain]).delete()[0]
    return {"facts": deleted, "fact_tombstones": len(chain)}
