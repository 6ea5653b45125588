"""Facts as search hits, ranked with messages. A fact is scored with BM25 as one more message of the
memory: its terms' document frequencies are the messages' (as the words' reads counted them) plus
the facts', so a fact and a message saying the same words score alike and one list ranks both.

Bounded like the rest of recall: one read of at most FACTS_READ of the memory's most recently
updated active facts (the time filters are conditions of that read), scored in linear time.
"""

from __future__ import annotations

from django.db.models import Q
from django.db.models.functions import Coalesce

from memories.models import Fact
from memories.recall.filters import Filters
from memories.recall.lexical import idf
from memories.recall.query import WORD
from memories.recall.ranking import Ranking
from memories.recall.text import stem

FACTS_READ = 200


def read(*, memory_id: str, filters: Filters) -> list[Fact]:
    """The memory's newest active facts (at most FACTS_READ). A fact's time is when the message it
    was learned from was said (`valid_from`), or when it was written for a fact a person wrote."""
    facts = Fact.objects.filter(memory_id=memory_id, active=True)
    if filters.after is not None or filters.before is not None:
        facts = facts.alias(said=Coalesce("valid_from", "created_at"))
        if filters.after is not None:
            facts = facts.filter(Q(said__gte=filters.after))
        if filters.before is not None:
            facts = facts.filter(Q(said__lt=filters.before))
    return list(facts.order_by("-updated_at")[:FACTS_READ])


def scored(
    facts: list[Fact],
    terms: list[str],
    df: dict[str, int],
    total: int,
    average_length: float,
    ranking: Ranking,
) -> list[tuple[float, Fact]]:
    """[(score, fact)] of the facts matching at least one term. `df` and `total`: the messages'
    document frequencies and count (empty and 0 when messages are not searched; a term that filled
    its read weighs common_weight, as in a message); `average_length`: the messages' average length
    in words (0: the facts' own)."""
    if not facts or not terms:
        return []
    stems = {t: stem(t) for t in terms}
    matched = []
    for fact in facts:
        words = {stem(w) for w in WORD.findall(fact.text.lower())}
        matched.append([t for t in terms if stems[t] in words])
    fact_df: dict[str, int] = {}
    for found in matched:
        for t in found:
            fact_df[t] = fact_df.get(t, 0) + 1
    lengths = [max(1, len(f.text.split())) for f in facts]
    average = average_length or sum(lengths) / len(lengths)
    everything = total + len(facts)
    k1, b = ranking.bm25_k1, ranking.bm25_b
    out = []
    for fact, found, length in zip(facts, matched, lengths, strict=True):
        if not found:
            continue
        score = sum(
            idf(df.get(t, 0) + fact_df[t], everything)
            * (ranking.common_weight if df.get(t, 0) >= ranking.per_term_cap else 1.0)
            * (k1 + 1)
            / (1 + k1 * (1 - b + b * length / average))
            for t in found
        )
        out.append((score, fact))
    return out
