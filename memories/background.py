"""Background processing of newly stored entries (run by the worker through the outbox).

Three steps, each idempotent, so a re-run after a crash does no harm:
1. recall indexing — index rows are keyed by entry id and replaced, never added twice; with an
   embedding provider, the new messages' vectors too (up to `embeddings.CHUNK_CHARS` of text);
2. fact extraction — from committed USER messages only; the store de-duplicates, supersedes by
   slot and respects tombstones, so the same statement never becomes two facts;
3. compaction — works from `summary_upto_seq` with a conditional update.
Each run also covers any gap since `Memory.background_upto_seq` (turns stored by decorate with no
report after them).

A run is bounded, so one big report never holds a worker for long: at most ENTRIES_PER_RUN
entries, CHUNK_CHARS of text embedded and COMPACT_PASSES compaction passes. What is left is in
its answer (`rest`, the vectors' `due`), and the outbox queues it as jobs of their own,
which take their turn with other projects' work (memories.services.outbox). Nothing here queues
work itself.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils.module_loading import import_string

from common import metrics, tracing
from common.messages import text_of
from memories import embeddings, recall
from memories.compaction import memory_compact
from memories.facts import RuleExtractor, UserMessage
from memories.facts.llm import ExtractorFailed, LLMExtractor, complete_for_project
from memories.facts.store import facts_apply
from memories.models import DEFAULT_THREAD, Entry, Memory

log = logging.getLogger("threadless.background")

ENTRIES_PER_RUN = 500  # entries one run indexes and extracts facts from; the rest is a job of its own
COMPACT_PASSES = 2  # compaction passes one run makes (each a model call when a model is configured)


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
    """One bounded run over the memory's entries from the first unprocessed one (or `from_seq`)
    to `to_seq`. `rest`: the seq range a further run must cover (None when this one was enough)."""
    memory = Memory.objects.select_related("project").filter(pk=memory_id).first()
    if memory is None:  # deleted meanwhile: nothing to do
        return {"indexed": 0, "rest": None}
    start = min(from_seq, memory.background_upto_seq + 1)
    end = max(to_seq, start - 1)
    stop = min(end, start + ENTRIES_PER_RUN - 1)
    rows = list(
        Entry.objects.filter(memory_id=memory_id, seq__gte=start, seq__lte=stop)
        .order_by("seq")
        .values_list("id", "seq", "kind", "role", "committed", "content", "parts", "thread")
    )
    message_ids = [r[0] for r in rows if r[2] == "message"]
    indexed = recall.index_entries(memory_id=memory_id, entry_ids=message_ids) if message_ids else 0
    vectors = _embed(memory, message_ids, stop)
    complete = complete_for_project(memory.project)
    with tracing.span("threadless.facts.extract", **{"threadless.facts.model": complete is not None}):
        facts = extract_facts(memory=memory, messages=_user_messages(rows), complete=complete)
    # Each thread these entries belong to folds its own history.
    compacted, more = {"folded": 0}, stop < end
    for thread in dict.fromkeys(r[7] for r in rows) or (DEFAULT_THREAD,):
        done = memory_compact(memory_id=memory_id, complete=complete, thread=thread, passes=COMPACT_PASSES)
        compacted["folded"] += done["folded"]
        more = more or done.get("more", False)
    Memory.objects.filter(pk=memory_id).update(background_upto_seq=Greatest(F("background_upto_seq"), stop))
    return {
        "indexed": indexed,
        "vectors": vectors,
        "facts": facts,
        "compacted": compacted,
        "rest": {"from_seq": stop + 1, "to_seq": end} if more else None,
    }


def _embed(memory: Memory, message_ids: list[int], upto_seq: int) -> dict:
    """Step 1b: embed the new messages (when the project has a provider), newest first, up to
    CHUNK_CHARS of text. `due`: messages up to `upto_seq` are left without a vector of the
    current model (the rest of these, or older ones after a model change): a vectors job's work.
    A provider failure is logged and retried on a later run (the backfill finds what has no
    vector); it never blocks the rest."""
    provider = embeddings.provider_for(memory.project)
    if provider is None:
        return {"embedded": 0, "due": False}
    try:
        done = embeddings.embed_entries(
            memory_id=memory.id, entry_ids=message_ids, provider=provider, max_chars=embeddings.CHUNK_CHARS
        )
    except embeddings.EmbeddingFailed as exc:
        log.warning("memory %s: embedding failed (%s); recall stays lexical for now", memory.id, exc)
        return {"embedded": 0, "due": False, "failed": True}
    return {
        "embedded": done,
        "due": embeddings.backfill_due(memory_id=memory.id, provider=provider, upto_seq=upto_seq),
    }


def embed_missing(*, memory_id: str) -> dict:
    """A vectors job: one bounded chunk (`embeddings.backfill`: CHUNK_CHARS of text) of the memory's
    messages without a vector of the current model (after an import or a model change). A provider
    failure is logged and ends the chain: the memory's next report job finds what is still missing."""
    try:
        return embeddings.backfill(memory_id=memory_id)
    except embeddings.EmbeddingFailed as exc:
        log.warning("memory %s: embedding failed (%s); recall stays lexical for now", memory_id, exc)
        return {"embedded": 0, "dropped": 0, "remaining": 0, "failed": True}
