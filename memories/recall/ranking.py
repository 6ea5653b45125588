"""Recall's tuned parameters: one frozen object, passed to `search` (tests and benches pass their
own; nothing flips module globals). What each value was measured against lives in docs/tuning/."""

from __future__ import annotations

import dataclasses

from memories.embeddings import CODE_CANDIDATES, STATS_SAMPLE


@dataclasses.dataclass(frozen=True, slots=True)
class Ranking:
    """How `search` reads candidates and ranks them. The default (`RANKING`) is what decorate and
    the search endpoint use."""

    # --- reading candidates from the index (each bounds recall's cost whatever the memory's size)
    per_term_cap: int = 200  # index rows per read; a term that fills it counts as common
    max_pair_reads: int = 10  # conjunctive reads of two common terms per search

    # --- lexical score (BM25 over the bounded candidates)
    bm25_k1: float = 1.2
    bm25_b: float = 0.5
    common_weight: float = 0.25  # weight of a term that fills its cap: it says little about which message
    named_speaker_term: float = 1.0  # weight of a query term that is a named speaker, as a word of a message

    # --- neighbours: evidence often sits next to the words that match
    spread_from: int = 30  # how many of the best candidates spread their score to their neighbours
    prev_share: float = 0.7  # share of the previous message's score a message gets (it may answer it)
    next_share: float = 0.3  # share of the next message's score a message gets
    # Two messages away: the same speaker's next message, after the other's question or reply.
    prev2_share: float = 0.4
    next2_share: float = 0.2
    neighbour_min_words: int = 5  # a neighbour matching no term is a hit of its own only from this length

    # --- a newer statement about the same thing ranks at least as high as the older one
    # Of two of the best candidates matching the same query terms, sharing at least
    # `supersede_shared` words and `supersede_overlap` of the shorter one's words (0 turns it off).
    supersede_shared: int = 2
    supersede_overlap: float = 0.5

    # --- meaning (with a query vector)
    fuse_depth: int = 120  # nearest stored messages that join the candidates and add their closeness
    # A nearest vector adds up to `dense_weight` of the best lexical score when some message
    # matches all of the query's words, rising to `dense_weight_weak` as the query's lexical
    # coverage c falls: dense_weight + (dense_weight_weak − dense_weight)·(1 − c)^weak_power.
    dense_weight: float = 0.5
    dense_weight_weak: float = 2.5
    weak_power: float = 3.0
    dense_question: float = 0.5  # share of a stored question's closeness that counts (answers are statements)
    # A paraphrase: when `unsaid_share` of the query's IDF mass is in words no message has and the
    # nearest vector stands `dense_standout` standard deviations above the scanned ones' mean, and
    # the query names no speaker, meaning weighs at least `dense_weight_unsaid`.
    unsaid_share: float = 0.4
    dense_standout: float = 2.8
    dense_weight_unsaid: float = 3.0
    # When the query names a speaker, a stored message's closeness also takes this share of the
    # previous message's (a reply scores part of what it answers).
    dense_prev_share: float = 0.3
    # The dense scan (memories.embeddings.neighbourhood): the newest rows whose float vectors are
    # read whole, and how many older rows, chosen among every row by their codes, are rescored.
    dense_sample: int = STATS_SAMPLE
    dense_candidates: int = CODE_CANDIDATES

    # --- weights on the fused score
    speaker_boost: float = 1.5  # a message by a speaker the query names ("Name: text") weighs 1 + this
    date_boost: float = 3.0  # a message written on a date the query names weighs 1 + this
    day_share: float = 0.2  # a message also scores this share of its day's `day_top` best scores
    day_top: int = 3
    distinct_text: bool = True  # of messages saying the same text, only the best-scoring one is a hit

    # --- the selection step, over the `rerank_from` best candidates only
    rerank_from: int = 100  # at least decorate's snippet count
    other_drop: float = 0.2  # a named speaker's message about the other person weighs this much less
    self_reach: int = 5  # words "next to" a matching word, for `other_drop`
    when_boost: float = 0.5  # for a "when" question, a message that mentions a time weighs 1 + this more
    # A list question takes its `list_head` first hits ranked with `list_day_share` as the day
    # prior (spread over sessions); 0 turns the rule off.
    list_day_share: float = -0.1
    list_head: int = 10


RANKING = Ranking()
