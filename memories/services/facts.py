"""Facts written by people (API, console): a person's edit or delete wins over extraction, which
must never bring the old text back (tombstones, `memories.facts.store`)."""

from __future__ import annotations

import logging
import re
from typing import Any

from django.db import transaction

from common.errors import InvalidRequest
from memories import events
from memories.facts.base import fact_normalize, fact_tokens
from memories.facts.store import tombstone_add
from memories.models import Fact, Memory

log = logging.getLogger("threadless.memories")


def fact_text_check(text: Any, *, field: str = "text") -> str:
    """A fact's text as a person may write it: 1 to 2,000 characters, its whitespace runs made one space."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidRequest(f"{field}: must be a non-empty string.")
    if len(text) > 2000:
        raise InvalidRequest(f"{field}: at most 2,000 characters.")
    return re.sub(r"\s+", " ", text).strip()


@transaction.atomic  # the fact and its webhook event commit together
def fact_create(
    *,
    memory: Memory,
    text: str,
    slot: str = "",
    extractor: str = "api",
    source_entry_ids: list[int] | None = None,
    confidence: float = 1.0,
) -> tuple[Fact, bool]:
    """Add a fact; an active fact with the same normalised text is returned instead (no duplicate)."""
    text = fact_text_check(text)
    normalized = fact_normalize(text)
    existing = Fact.objects.filter(memory=memory, active=True, normalized=normalized).first()
    if existing is not None:
        return existing, False
    fact = Fact.objects.create(
        memory=memory,
        text=text,
        normalized=normalized,
        slot=slot[:100],
        extractor=extractor,
        source_entry_ids=source_entry_ids or [],
        confidence=confidence,
        tokens=fact_tokens(text),
    )
    events.fact_created(memory, fact)
    return fact, True


def fact_update(*, fact: Fact, text: str, extractor: str = "api") -> Fact:
    """A person's edit: it wins over extraction, which must never bring the old text back."""
    text = fact_text_check(text)
    if fact_normalize(text) != fact.normalized:
        tombstone_add(fact=fact)
    fact.text = text
    fact.normalized = fact_normalize(text)
    fact.extractor = extractor
    fact.tokens = fact_tokens(text)
    fact.save(update_fields=["text", "normalized", "extractor", "tokens", "updated_at"])
    return fact


def fact_delete(*, fact: Fact) -> dict[str, int]:
    """Forget a fact and the history it replaced; tombstones keep extraction from re-adding them."""
    with transaction.atomic():
        chain, frontier = [fact], [fact.pk]
        while frontier:
            older = list(
                Fact.objects.filter(superseded_by_id__in=frontier).exclude(pk__in=[f.pk for f in chain])
            )
            chain.extend(older)
            frontier = [f.pk for f in older]
        for item in chain:
            tombstone_add(fact=item)
        Fact.objects.filter(pk__in=[f.pk for f in chain]).update(superseded_by=None)
        deleted = Fact.objects.filter(pk__in=[f.pk for f in chain]).delete()[0]
        events.fact_deleted(fact, {"facts": deleted, "fact_tombstones": len(chain)})
    return {"facts": deleted, "fact_tombstones": len(chain)}
