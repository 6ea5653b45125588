"""Applying extracted candidates to a memory's facts: de-duplicate, supersede, respect people.

Rules, in order, for each candidate (oldest statement first):
1. A tombstone (a person deleted or edited a fact) blocks the same normalised text for good,
   and the same slot for statements made up to the moment the person acted.
2. The same normalised text as an active fact: nothing new; an extracted fact gains the source.
   As a superseded fact: it comes back only when the statement is newer than the slot's
   current fact ("I moved back to Paris").
3. The same slot as an active fact: a newer statement supersedes it (the old one is kept with
   active=False and superseded_by, never shown to the model); an older one (a re-run, or history
   imported after newer history) is dropped.
"Newer" compares the times the messages were said (their entries' `created_at`, which an import
sets from the history's own times), not the order they were stored or processed, so importing
threads in any order leaves the statement said last as the current fact. A fact holds from its
message's time (`valid_from`) until its superseding message's (`valid_to`).
Run inside the memory's row lock so two workers never race into a duplicate.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from memories import events
from memories.facts.base import Candidate, fact_normalize, fact_tokens
from memories.models import Entry, Fact, FactTombstone, Memory

PEOPLE = ("api", "console")
# An imported fact's extractor is the document's, behind this mark (memories.transfer): the server
# never shows a document's word for who wrote a fact as its own.
IMPORTED = "imported:"


def by_a_person(extractor: str) -> bool:
    """Whether a fact was written by a person (API, console), here or in the install it was
    imported from: extraction never changes such a fact."""
    return extractor.removeprefix(IMPORTED) in PEOPLE


def _newest_source(fact: Fact) -> int:
    return max((int(x) for x in fact.source_entry_ids or [] if str(x).isdigit()), default=0)


def _is_newer(said_at, newest: int, fact: Fact) -> bool:
    """A statement said at `said_at` (its newest source entry id `newest`) is newer than `fact`:
    by the messages' times, ties (and facts without one) by the entries' order."""
    if said_at is None or fact.valid_from is None:
        return newest > _newest_source(fact)
    return (said_at, newest) > (fact.valid_from, _newest_source(fact))


def _blocked(memory: Memory, normalized: str, candidate: Candidate) -> bool:
    stones = FactTombstone.objects.filter(memory=memory)
    if stones.filter(normalized=normalized).exists():
        return True
    return (
        bool(candidate.slot)
        and stones.filter(slot=candidate.slot, upto_seq__gte=candidate.source_seq).exists()
    )


def _create(memory: Memory, candidate: Candidate, normalized: str, extractor: str, said_at) -> Fact:
    fact = Fact.objects.create(
        valid_from=said_at,
        memory=memory,
        text=candidate.text[:2000],
        normalized=normalized,
        slot=candidate.slot[:100],
        extractor=extractor,
        source_entry_ids=sorted(set(candidate.source_entry_ids)),
        confidence=round(float(candidate.confidence), 3),
        tokens=fact_tokens(candidate.text),
    )
    events.fact_created(memory, fact)
    return fact


def _supersede(old: Fact, new: Fact) -> None:
    Fact.objects.filter(pk=old.pk).update(
        active=False, superseded_by=new, valid_to=new.valid_from, updated_at=timezone.now()
    )
    events.fact_superseded(old, new)


def facts_apply(*, memory: Memory, candidates: list[Candidate], extractor: str) -> dict:
    """Write candidates as facts. Returns counts: created, merged, superseded, skipped."""
    counts = {"created": 0, "merged": 0, "superseded": 0, "skipped": 0}
    if not candidates:
        return counts
    with transaction.atomic():
        memory = Memory.objects.select_for_update().filter(pk=memory.pk).first()
        if memory is None:  # deleted meanwhile: nothing to remember
            return counts
        # When each source was said (one read for all the candidates).
        said = dict(
            Entry.objects.filter(
                memory_id=memory.pk, id__in={i for c in candidates for i in c.source_entry_ids}
            ).values_list("id", "created_at")
        )
        for candidate in sorted(candidates, key=lambda c: c.source_seq):
            text = " ".join(candidate.text.split())
            normalized = fact_normalize(text)
            if not normalized or _blocked(memory, normalized, candidate):
                counts["skipped"] += 1
                continue
            candidate.text = text
            newest = max(candidate.source_entry_ids, default=0)
            said_at = max((said[i] for i in candidate.source_entry_ids if i in said), default=None)
            same = (
                Fact.objects.filter(memory=memory, normalized=normalized)
                .order_by("-active", "-updated_at")
                .first()
            )
            current = (
                Fact.objects.filter(memory=memory, active=True, slot=candidate.slot)
                .order_by("-updated_at")
                .first()
                if candidate.slot
                else None
            )
            if same is not None and same.active:
                if not by_a_person(same.extractor) and not set(candidate.source_entry_ids) <= set(
                    same.source_entry_ids
                ):
                    same.source_entry_ids = sorted(
                        set(same.source_entry_ids) | set(candidate.source_entry_ids)
                    )
                    same.save(update_fields=["source_entry_ids", "updated_at"])
                    counts["merged"] += 1
                else:
                    counts["skipped"] += 1
                continue
            if same is not None:  # superseded history with the same text
                if (
                    current is not None
                    and _is_newer(said_at, newest, current)
                    and not by_a_person(same.extractor)
                ):
                    Fact.objects.filter(pk=same.pk).update(
                        active=True,
                        superseded_by=None,
                        valid_from=said_at,
                        valid_to=None,
                        updated_at=timezone.now(),
                        source_entry_ids=sorted(set(same.source_entry_ids) | set(candidate.source_entry_ids)),
                    )
                    same.refresh_from_db()
                    _supersede(current, same)
                    counts["superseded"] += 1
                else:
                    counts["skipped"] += 1
                continue
            if current is not None:
                if not _is_newer(said_at, newest, current):
                    counts["skipped"] += 1  # an older statement (a re-run): the newer fact stands
                    continue
                fact = _create(memory, candidate, normalized, extractor, said_at)
                _supersede(current, fact)
                counts["created"] += 1
                counts["superseded"] += 1
                continue
            _create(memory, candidate, normalized, extractor, said_at)
            counts["created"] += 1
    return counts


def tombstone_add(*, fact: Fact) -> None:
    """Remember that a person removed or replaced this fact's statement (see rule 1)."""
    memory = Memory.objects.filter(pk=fact.memory_id).values_list("last_seq", flat=True).first() or 0
    FactTombstone.objects.create(
        memory_id=fact.memory_id, normalized=fact.normalized, slot=fact.slot, upto_seq=memory
    )
