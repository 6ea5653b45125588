"""`search`: the ranked snippets of a memory's committed messages for a query, in named stages.

Cost is bounded by the index, whatever the memory's size: at most MAX_QUERY_TERMS single-term
reads and `max_pair_reads` conjunctive reads of at most `per_term_cap` rows each, then at most
4·`spread_from` neighbour rows by (memory, seq) (two each side).
With a query vector: the dense scan (bound in memories/embeddings/search.py: at most `dense_sample` +
2·`dense_candidates` vector rows read, plus one pass over the memory's codes held in the process)
and `fuse_depth` rows by (memory, seq). Nothing reads or ranks the rest of the memory, and
nothing here calls a model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from memories.recall import dense, facts, lexical, reads, selection
from memories.recall.dense import QueryVector
from memories.recall.filters import NO_FILTERS, Filters
from memories.recall.hits import Message
from memories.recall.index import is_postgresql
from memories.recall.query import Query, parse
from memories.recall.ranking import RANKING, Ranking
from memories.recall.snippets import as_result
from memories.recall.text import is_question


def search(
    *,
    memory_id: str,
    query: str,
    limit: int = 5,
    before_seq: int | None = None,
    query_vector: QueryVector | Callable[[], QueryVector | None] | None = None,
    whole_chars: int = 0,
    ranking: Ranking = RANKING,
    thread: str | None = None,
    filters: Filters = NO_FILTERS,
    messages: bool = True,
    with_facts: bool = False,
) -> list[dict]:
    """Ranked snippets, best first: [{"entry_id", "seq", "turn", "date", "role", "snippet", "score",
    "thread"}] (the thread read from the index row, as the date is).

    `before_seq`: only entries strictly older than this sequence number (decorate passes the
    first message of its window, so recall never repeats what the model already sees).
    A higher score is a better match.
    `query_vector`: (model key, unit vector) of the query (memories.embeddings.embed_query); the
    nearest stored messages of that model join the candidates and add their closeness, so a
    paraphrase with no word in common can still be found. It may be a callable answering it (or
    None): it is called only after the words' candidates are read and scored, so an embedding
    still running (`embeddings.embed_query_soon`) overlaps those reads.
    `whole_chars`: a message up to this many characters is its snippet whole (decorate's block shows
    messages whole); a longer one, and every one by default, is cut around the match.
    `thread`: only that thread's messages (None: every thread's). The index reads and the
    neighbours are the thread's own; the nearest vectors are the memory's, those of other threads
    left out.
    `filters`: only messages of that role and time span, as conditions of every read (the words',
    the neighbours', the nearest vectors' messages); like `thread`, the nearest vectors are the
    memory's, those the filters refuse left out.
    `messages` (False: no message is searched) and `with_facts`: the memory's active facts (their
    time filtered, `facts.read`) ranked in the same list (`facts.scored`), each
    {"type": "fact", "fact": Fact, "score"}; message hits then carry "type": "message". At most
    `limit` hits in all.

    The stages: read the candidates of each term (`reads.candidates`); score them with BM25
    (`lexical.bm25`); spread the best to their neighbours; add the nearest vectors
    (`dense.closeness`); fuse (`lexical.with_neighbours`, `lexical.newer_first`,
    `selection.fused`); select (`selection.ranked`: day prior, distinct texts, rerank, list head).
    """
    parsed = parse(query)
    if limit < 1:
        return []
    stats = _Stats()
    out = (
        _messages(
            memory_id,
            parsed,
            limit,
            before_seq,
            query_vector,
            whole_chars,
            ranking,
            thread,
            filters,
            stats,
        )
        if messages
        else []
    )
    if not with_facts:
        return out
    found = facts.scored(
        facts.read(memory_id=memory_id, filters=filters) if parsed.terms else [],
        parsed.terms,
        stats.df,
        stats.total,
        stats.average,
        ranking,
    )
    hits = [{"type": "message", **hit} for hit in out]
    hits += [{"type": "fact", "fact": fact, "score": round(score, 4)} for score, fact in found]
    hits.sort(key=lambda h: -h["score"])  # stable: a message before a fact of the same score
    return hits[:limit]


@dataclasses.dataclass(slots=True)
class _Stats:
    """What the messages' reads counted, for scoring facts on the same scale."""

    df: dict[str, int] = dataclasses.field(default_factory=dict)
    total: int = 0
    average: float = 0.0


def _messages(
    memory_id: str,
    parsed: Query,
    limit: int,
    before_seq: int | None,
    query_vector,
    whole_chars: int,
    ranking: Ranking,
    thread: str | None,
    filters: Filters,
    stats: _Stats,
) -> list[dict]:
    terms = parsed.terms
    if not terms and not query_vector:
        return []
    before_id = None
    if not is_postgresql() and before_seq is not None:
        before_id = reads.before_entry_id(memory_id, before_seq)
        if before_id is None:
            before_seq = None  # nothing at or after it: everything is older
    found = reads.candidates(
        memory_id=memory_id,
        terms=terms,
        before_seq=before_seq,
        before_id=before_id,
        ranking=ranking,
        thread=thread,
        filters=filters,
    )
    rows = found.rows
    total = max(reads.message_count(memory_id), len(rows))
    stats.df, stats.total = found.df, total
    if rows:
        stats.average = sum(len(r.text.split()) for r in rows.values()) / len(rows)
    if not rows and not query_vector:
        return []
    scored = lexical.bm25(rows, found.hits, found.df, total, ranking) if rows else []
    scored.sort(key=lambda s: (-s[0], -s[1]))
    own = {rows[e].seq: parts for _, _, e, parts in scored}
    pool = {rows[e].seq: rows[e] for _, _, e, _ in scored}
    top = [rows[e] for _, _, e, _ in scored[: ranking.spread_from]]
    _spread(memory_id, pool, top, before_seq, ranking, thread, filters)
    names = lexical.speakers_named(top, terms)
    closeness, weight = _meaning(
        memory_id, query_vector, before_seq, pool, names, terms, found, total, ranking, thread, filters
    )
    scores = lexical.with_neighbours(pool, own, names, ranking)
    if ranking.supersede_shared:
        scores = lexical.newer_first(scores, own, pool, ranking)
    hits = selection.fused(pool, scores, closeness, weight, names, parsed.dates, ranking)
    best = selection.ranked(hits, own, names, parsed.when, parsed.is_list, limit, ranking)
    return [as_result(hit.message, terms, hit.score, whole_chars) for hit in best]


def _spread(
    memory_id: str,
    pool: dict[int, Message],
    top: list[Message],
    before_seq: int | None,
    ranking: Ranking,
    thread: str | None = None,
    filters: Filters = NO_FILTERS,
) -> None:
    """Adds the neighbours of the best candidates (up to two each side) to `pool`, read once:
    evidence often sits next to the words that match ("who played at the concert?" is answered by
    the reply to "what concert was it?"). A neighbour matching no term joins the pool only when
    it says something ("ok" does not)."""
    if not (ranking.prev_share or ranking.next_share):
        return
    reach = 2 if (ranking.prev2_share or ranking.next2_share) else 1
    near = reads.neighbours(memory_id, [m.seq for m in top], before_seq, reach, thread, filters)
    for seq, message in near.items():
        if seq not in pool and len(message.text.split()) >= ranking.neighbour_min_words:
            pool[seq] = message


def _meaning(
    memory_id: str,
    query_vector: QueryVector | Callable[[], QueryVector | None] | None,
    before_seq: int | None,
    pool: dict[int, Message],
    names: set[str],
    terms: list[str],
    found: reads.Candidates,
    total: int,
    ranking: Ranking,
    thread: str | None = None,
    filters: Filters = NO_FILTERS,
) -> tuple[dict[int, float], float]:
    """({seq: closeness 0..1}, the weight of meaning against words). The nearest stored messages
    join the pool (a paraphrase shares no word); a stored question's closeness counts
    dense_question of itself (the answer is a statement)."""
    if callable(query_vector):
        query_vector = query_vector()
    if not query_vector:
        return {}, 0.0
    closeness, standout = dense.closeness(
        memory_id=memory_id,
        query_vector=query_vector,
        before_seq=before_seq,
        named=bool(names),
        ranking=ranking,
    )
    if not closeness:
        return {}, 0.0
    pool.update(
        reads.messages_by_seq(memory_id, [seq for seq in closeness if seq not in pool], thread, filters)
    )
    if thread is not None or filters:  # the pool holds only the messages they admit
        closeness = {seq: c for seq, c in closeness.items() if seq in pool}
    if ranking.dense_question != 1.0:
        closeness = {
            seq: c * ranking.dense_question if seq in pool and is_question(pool[seq].text) else c
            for seq, c in closeness.items()
        }
    coverage = dense.lexical_coverage(terms, found.hits, found.df, total)
    unsaid = dense.unsaid_share(terms, found.df, total)
    return closeness, dense.dense_weight(coverage, unsaid, standout, named=bool(names), ranking=ranking)
