"""Dense search over a memory's vectors: the nearest rows to a query vector, over the whole memory
(the newest rows' float vectors, the older rows' codes, the best of those rescored: bounded per
search whatever the memory's size, `memories.embeddings.store`), and the closeness of a query to
given messages (`source_similarity`).

Bound per search: at most STATS_SAMPLE + 2·CODE_CANDIDATES rows' float vectors, plus one pass over
the memory's codes — n·v·dim/8 bytes for n messages of v vectors (~2.4 MB for 20,000 rows of 2.5
vectors, ~12 MB at 100,000). `neighbourhood`'s `prev_share` (a reply scoring part of what it
answers) works on those same closenesses.
"""

from __future__ import annotations

from typing import NamedTuple

from memories.embeddings.store import (
    CODE_CANDIDATES,
    STATS_SAMPLE,
    VectorStore,
    closeness_of,
    codes_for,
    query_bits,
)


class Nearest(NamedTuple):
    """The nearest stored vectors, best first, and the spread of every sampled cosine (so a caller
    can tell a nearest that stands out from one among equals)."""

    hits: list[tuple[float, int, int]]  # (cosine, seq, entry_id)
    mean: float
    std: float


def neighbourhood(
    *,
    memory_id: str,
    model: str,
    query: list[float],
    limit: int,
    before_seq: int | None = None,
    prev_share: float = 0.0,
    sample: int = STATS_SAMPLE,
    candidates: int = CODE_CANDIDATES,
) -> Nearest:
    """`nearest`, with the mean and standard deviation of the scores of the newest `sample`
    rows. A row's score is its `closeness`, from its float vectors: those of the newest
    `sample` rows, and of the `candidates` older rows whose codes are closest to the
    query's (the whole memory's codes are scanned: nothing is out of reach). `prev_share` > 0:
    plus that share of the closeness of the message right before it (seq − 1; read too)."""
    import numpy

    codes = codes_for(memory_id, model, len(query))
    newest = codes.newest(before_seq, sample)
    wanted = newest
    if len(newest) == sample:  # more may be older: the best of them by their codes
        older = codes.best(query_bits(query, codes.words), newest[-1], candidates)
        if prev_share:
            older = sorted(set(older) | {s - 1 for s in older})
        wanted = newest + older
    found = codes.scores(memory_id=memory_id, model=model, seqs=wanted, query=query)
    if found is None or not found[0]:  # another dimension: nothing comparable
        return Nearest([], 0.0, 0.0)
    entry_ids, kept, scores = found
    sampled = sum(1 for seq in kept[: len(newest)] if seq >= newest[-1]) if newest else 0
    seqs = numpy.asarray(kept, dtype=numpy.int64)
    if prev_share:  # each row also takes a share of the row right before it (0 where there is none)
        order = numpy.argsort(seqs)
        at = numpy.minimum(numpy.searchsorted(seqs[order], seqs - 1), len(seqs) - 1)
        before = order[at]
        scores = scores + prev_share * numpy.where(seqs[before] == seqs - 1, scores[before], 0.0)
    spread = scores[:sampled] if sampled else scores
    ranked = numpy.argsort(-scores, kind="stable")[:limit]
    return Nearest(
        [(float(scores[i]), kept[i], entry_ids[i]) for i in ranked.tolist()],
        float(spread.mean()),
        float(spread.std()),
    )


def nearest(
    *, memory_id: str, model: str, query: list[float], limit: int, before_seq: int | None = None
) -> list[tuple[float, int, int]]:
    """[(closeness, seq, entry_id)] best first, over the whole memory (`neighbourhood`)."""
    return neighbourhood(
        memory_id=memory_id, model=model, query=query, limit=limit, before_seq=before_seq
    ).hits


def source_similarity(*, sources: dict[str, list[int]], query) -> dict[str, float]:
    """{key: closeness} of the query (model key, unit vector) to the nearest of each key's source
    messages; keys whose sources have no vector of that model are left out. Reads only the
    vectors of those entries (decorate passes at most the facts block's 200 facts)."""
    model, vector = query
    wanted = sorted({e for ids in sources.values() for e in ids})
    blobs = VectorStore.of_entries(entry_ids=wanted, model=model)
    stored = dict(zip(blobs, closeness_of(list(blobs.values()), vector), strict=True))
    out = {}
    for key, ids in sources.items():
        scores = [stored[e] for e in ids if stored.get(e) is not None]
        if scores:
            out[key] = max(scores)
    return out
