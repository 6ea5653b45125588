"""Background processing of newly stored entries (run by the worker through the outbox).

Three steps, each idempotent, so a re-run after a crash does no harm:
1. recall indexing — index rows are keyed by entry id and replaced, never added twice; with an
   embedding provider, the new messages' vectors too (and one bounded step of re-embedding
   older messages after a model change; the rest goes to the `backfill_vectors` task);
2. fact extraction — from committed USER messages only; the store de-duplicates, supersedes by
   slot and respects tombstones, so the same statement never becomes two facts;
3. compaction — works from `summary_upto_seq` with a conditional update.
Each run also covers any gap since `Memory.background_upto_seq` (turns stored by decorate with no
report after them), in bounded chunks.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils.module_loading import import_string

from common import metrics, tracing
from common.messages import text_of
from memories import embeddings, queue, recall
from memories.compaction import memory_compact
from memories.facts import RuleExtractor, UserMessage
from memories.facts.llm import ExtractorFailed, LLMExtractor, complete_for_project
from memories.facts.store import facts_apply
from memories.models import DEFAULT_THREAD, Entry, Memory

log = logging.getLogger("threadless.background")

MAX_ENTRIES_PER_RUN = 5000


def _user_messages(rows: list[tuple]) -> list[UserMessage]:
    """The only input an extractor ever gets: committed user messages, text parts only."""
    out = []
    for entry_id, seq, kind, role, committed, content, parts, *_rest in rows:
        if kind != "message" or role != "user" or not committed:
            continue
        text = text_of(parts) if parts else content
        if text and text.strip():
            out.append(UserMessage(entry_id=entry_id, seq=seq, text=text))
    return out


def _offline_extractor():
    """The rule-based extractor, or a deployment's own (THREADLESS_FACT_EXTRACTOR, a dotted path)."""
    path = settings.THREADLESS_FACT_EXTRACTOR
    return import_string(path)() if path else RuleExtractor()


def extract_facts(*, memory: Memory, messages: list[UserMessage], complete=None) -> dict:
    """Run the LLM extractor when a model is configured (the rules when it fails), else the rules."""
    if not messages:
        return {"created": 0, "merged": 0, "superseded": 0, "skipped": 0, "extractor": None}
    extractor_name = "rules"
    candidates = None
    if complete is not None:
        try:
            candidates = LLMExtractor(complete).extract(messages)
            extractor_name = "llm"
        except ExtractorFailed as exc:
            log.warning("memory %s: LLM extraction failed (%s); using the rules", memory.id, exc)
    if candidates is None:
        candidates = _offline_extractor().extract(messages)
    counts = facts_apply(memory=memory, candidates=candidates, extractor=extractor_name)
    metrics.facts(extractor_name, counts)
    return {**counts, "extractor": extractor_name}


def process_entries(*, memory_id: str, from_seq: int, to_seq: int) -> dict:
    memory = Memory.objects.select_related("project").filter(pk=memory_id).first()
    if memory is None:  # deleted meanwhile: nothing to do
        return {"indexed": 0}
    start = min(from_seq, memory.background_upto_seq + 1)
    end = max(to_seq, start - 1)
    if end - start + 1 > MAX_ENTRIES_PER_RUN:
        start = end - MAX_ENTRIES_PER_RUN + 1
    rows = list(
        Entry.objects.filter(memory_id=memory_id, seq__gte=start, seq__lte=end)
        .order_by("seq")
        .values_list("id", "seq", "kind", "role", "committed", "content", "parts", "thread")
    )
    message_ids = [r[0] for r in rows if r[2] == "message"]
    indexed = recall.index_entries(memory_id=memory_id, entry_ids=message_ids) if message_ids else 0
    vectors = _embed(memory, message_ids)
    complete = complete_for_project(memory.project)
    with tracing.span("threadless.facts.extract", **{"threadless.facts.model": complete is not None}):
        facts = extract_facts(memory=memory, messages=_user_messages(rows), complete=complete)
    # Each thread these entries belong to folds its own history.
    compacted = {"folded": 0}
    for thread in dict.fromkeys(r[7] for r in rows) or (DEFAULT_THREAD,):
        compacted["folded"] += memory_compact(memory_id=memory_id, complete=complete, thread=thread)["folded"]
    Memory.objects.filter(pk=memory_id).update(background_upto_seq=Greatest(F("background_upto_seq"), end))
    return {"indexed": indexed, "vectors": vectors, "facts": facts, "compacted": compacted}


def _embed(memory: Memory, message_ids: list[int]) -> dict:
    """Step 1b: embed the new messages (when the project has a provider) and take one bounded
    step of re-embedding older ones after a model change. A provider failure is logged and
    retried on the next run (the backfill finds what has no vector); it never blocks the rest."""
    provider = embeddings.provider_for(memory.project)
    if provider is None:
        return {"embedded": 0}
    try:
        done = embeddings.embed_entries(memory_id=memory.id, entry_ids=message_ids, provider=provider)
        step = embeddings.backfill(memory_id=memory.id, provider=provider)
    except embeddings.EmbeddingFailed as exc:
        log.warning("memory %s: embedding failed (%s); recall stays lexical for now", memory.id, exc)
        return {"embedded": 0, "failed": True}
    if step["remaining"]:
        queue.send(queue.BACKFILL_VECTORS, memory_id=memory.id)
    return {"embedded": done + step["embedded"], "dropped": step["dropped"], "remaining": step["remaining"]}
