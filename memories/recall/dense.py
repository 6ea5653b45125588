"""The meaning side of ranking: the nearest stored vectors (`memories.embeddings.neighbourhood`,
whose bound is in that module's docstring) as closeness 0..1, and how much that closeness weighs
against the words."""

from __future__ import annotations

from memories import embeddings
from memories.recall.lexical import idf
from memories.recall.ranking import RANKING, Ranking

QueryVector = tuple[str, list[float]]  # (model key, unit vector)


def closeness(
    *, memory_id: str, query_vector: QueryVector, before_seq: int | None, named: bool, ranking: Ranking
) -> tuple[dict[int, float], float]:
    """({seq: 0..1} for the fuse_depth nearest stored messages, standout). Closeness is the
    message's `embeddings.closeness` (its cosine, or its best sentence's in part) rescaled so the
    nearest is 1 and the fuse_depth-th is 0 (cosines of different queries are not comparable);
    standout is the nearest's cosine in standard deviations above the mean of the newest scanned
    vectors (0 when they are all alike). `named` (the query names a speaker): each cosine plus
    dense_prev_share of the previous message's."""
    model, vector = query_vector
    found = embeddings.neighbourhood(
        memory_id=memory_id,
        model=model,
        query=vector,
        limit=ranking.fuse_depth,
        before_seq=before_seq,
        prev_share=ranking.dense_prev_share if named else 0.0,
        sample=ranking.dense_sample,
        candidates=ranking.dense_candidates,
    )
    dense = found.hits
    if not dense:
        return {}, 0.0
    hi, lo = dense[0][0], dense[-1][0]
    span = (hi - lo) or 1.0
    standout = (hi - found.mean) / found.std if found.std > 0 else 0.0
    return {seq: max(0.0, (cos - lo) / span) for cos, seq, _ in dense}, standout


def lexical_coverage(terms: list[str], hits: dict[int, set[str]], df: dict[str, int], total: int) -> float:
    """0..1: how much of the query the best-matching candidate says, as the largest share of the
    query terms' IDF mass (plain BM25 IDF; a term no message has weighs most) that one candidate
    matches. 0 when nothing matches. Linear in the candidates."""
    weights = {t: idf(df.get(t, 0), total) for t in terms}
    mass = sum(weights.values())
    if mass <= 0:
        return 0.0
    return max((sum(weights.get(t, 0.0) for t in matched) for matched in hits.values()), default=0.0) / mass


def unsaid_share(terms: list[str], df: dict[str, int], total: int) -> float:
    """0..1: the share of the query terms' IDF mass in terms no candidate has (df 0: no message
    older than the window says that word). A paraphrase asks in words the memory never used
    ("Where did I leave the vehicle?" for "I parked the car on level 3")."""
    weights = {t: idf(df.get(t, 0), total) for t in terms}
    mass = sum(weights.values())
    return sum(v for t, v in weights.items() if not df.get(t, 0)) / mass if mass > 0 else 0.0


def dense_weight(
    coverage: float, unsaid: float, standout: float, named: bool = False, ranking: Ranking = RANKING
) -> float:
    """The share of the best lexical score the nearest vector adds: `dense_weight` when some
    message says the query's words whole, rising to `dense_weight_weak` as the words match less of
    it; at least `dense_weight_unsaid` when `unsaid_share` of the query is in words no message has
    and the nearest vector stands out from the rest (`dense_standout` standard deviations above
    the mean): the words cannot find the answer there, and meaning can. Not when the query names
    a speaker (`named`): the name is a word match that tells whose messages hold the answer, and
    the words it lacks are the ones a multi-hop answer spreads over several messages."""
    r = ranking
    weight = r.dense_weight + (r.dense_weight_weak - r.dense_weight) * (1 - coverage) ** r.weak_power
    if unsaid >= r.unsaid_share and standout >= r.dense_standout and not named:
        weight = max(weight, r.dense_weight_unsaid)
    return weight
