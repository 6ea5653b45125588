"""The lexical side of ranking: BM25 over the bounded candidates, the shares a message takes of
its neighbours' matches, and a newer statement lifted to the older one it corrects. Linear in the
candidates (the correction step: quadratic in `Ranking.spread_from` only)."""

from __future__ import annotations

import heapq
import math

from memories.recall.hits import Message
from memories.recall.ranking import Ranking
from memories.recall.text import content_words, speaker

Parts = dict[str, float]  # query term: its part of a message's BM25 score


def idf(df: int, total: int) -> float:
    """BM25's IDF of a term found in `df` of `total` messages."""
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def bm25(
    rows: dict[int, Message], hits: dict[int, set[str]], df: dict[str, int], total: int, ranking: Ranking
) -> list[tuple[float, int, int, Parts]]:
    """[(score, seq, entry_id, {term: its part of the score})] for the candidates: BM25 with the
    bounded document frequencies (a term that fills its cap counts as common and weighs little)."""
    lengths = {k: max(1, len(r.text.split())) for k, r in rows.items()}
    average = sum(lengths.values()) / len(lengths)
    k1, b = ranking.bm25_k1, ranking.bm25_b
    scored = []
    for entry_id, matched in hits.items():
        parts = {}
        for term in matched:
            common = df[term] >= ranking.per_term_cap
            weight = idf(df[term], total) * (ranking.common_weight if common else 1.0)
            parts[term] = weight * (k1 + 1) / (1 + k1 * (1 - b + b * lengths[entry_id] / average))
        scored.append((sum(parts.values()), rows[entry_id].seq, entry_id, parts))
    return scored


def speakers_named(messages, terms: list[str]) -> set[str]:
    """Speaker labels among these messages that the query names (a one-word label equal to a term)."""
    wanted = set(terms)
    return {name for name in {speaker(m.text) for m in messages} if name and set(name.split()) <= wanted}


def with_neighbours(
    pool: dict[int, Message], own: dict[int, Parts], names: set[str], ranking: Ranking
) -> dict[int, float]:
    """{seq: lexical score}: a message's own BM25 parts plus prev_share / next_share of the terms
    it lacks that the message before / after it matches, and prev2_share / next2_share of those
    that the message two before / after matches and neither it nor the one between does (the same
    speaker's next message, after the other's question). A named speaker's name as a term weighs
    named_speaker_term."""
    lexical: dict[int, float] = {}
    for seq in pool:
        mine = own.get(seq, {})
        if names and ranking.named_speaker_term != 1.0:
            mine = {t: v * ranking.named_speaker_term if t in names else v for t, v in mine.items()}
        if not (seq - 1 in own or seq + 1 in own or seq - 2 in own or seq + 2 in own):
            lexical[seq] = sum(mine.values())  # no neighbour matched anything (most of meaning's rows)
            continue
        # From a neighbour, only the terms this message lacks: a reply that repeats the message's
        # words adds nothing, a question whose answer this message is adds its words.
        lexical[seq] = (
            sum(mine.values())
            + ranking.prev_share * _lacking(own.get(seq - 1), mine)
            + ranking.next_share * _lacking(own.get(seq + 1), mine)
            + ranking.prev2_share * _lacking(own.get(seq - 2), {**own.get(seq - 1, {}), **mine})
            + ranking.next2_share * _lacking(own.get(seq + 2), {**own.get(seq + 1, {}), **mine})
        )
    return lexical


def _lacking(parts: Parts | None, mine: Parts) -> float:
    """A neighbour's score from the terms this message lacks."""
    if not parts:
        return 0.0
    return sum(v for t, v in parts.items() if t not in mine)


def newer_first(
    lexical: dict[int, float], own: dict[int, Parts], pool: dict[int, Message], ranking: Ranking
) -> dict[int, float]:
    """{seq: lexical score} where, among the spread_from best, a message matching the same
    query terms as an older one and sharing at least supersede_shared content words with it
    (and supersede_overlap of the shorter one's) scores at least as much as that older one (it
    says something newer about the same thing). Quadratic in spread_from only."""
    best = heapq.nlargest(ranking.spread_from, lexical, key=lambda seq: (lexical[seq], seq))
    best.sort()  # oldest first
    groups: dict[frozenset[str], list[int]] = {}
    for seq in best:
        if own.get(seq):
            groups.setdefault(frozenset(own[seq]), []).append(seq)
    lifted = dict(lexical)
    for seqs in groups.values():
        if len(seqs) < 2:  # only messages matching the same terms compare
            continue
        seen: list[tuple[int, set[str]]] = []  # (older seq, its words)
        for seq in seqs:
            words = content_words(pool[seq].text)
            for older, other in seen:
                shared = len(words & other)
                if (
                    shared >= ranking.supersede_shared
                    and lifted[older] >= lifted[seq]
                    and shared >= ranking.supersede_overlap * min(len(words), len(other))
                ):
                    lifted[seq] = lifted[older] * (1 + 1e-6)
            seen.append((seq, words))
    return lifted
