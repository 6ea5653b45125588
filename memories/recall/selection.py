"""The last stages of ranking, over the fused candidates (`Hit`s): the speaker and date weights,
the day prior (a day is a session), one hit per distinct text, and the selection step over the
`Ranking.rerank_from` best (talk about the other person, "when" questions, list questions).
Linear in the candidates; nothing here reads."""

from __future__ import annotations

import heapq

from memories.recall.hits import Hit, Message, new
from memories.recall.lexical import Parts
from memories.recall.query import Date, on_date
from memories.recall.ranking import Ranking
from memories.recall.snippets import day_of
from memories.recall.text import TIME, about_the_other, speaker, text_key


def fused(
    pool: dict[int, Message],
    lexical: dict[int, float],
    closeness: dict[int, float],
    weight: float,
    names: set[str],
    dates: list[Date],
    ranking: Ranking,
) -> list[Hit]:
    """Each candidate's score: its lexical score plus `weight` × the best lexical score × its
    closeness (meaning on the lexical scale, so the weights below apply to both alike), speaker_boost
    more when a speaker the query names wrote it, date_boost more when written on a date it names."""
    scale = max(lexical.values(), default=0.0) or 1.0
    out: list[Hit] = []
    for seq, message in pool.items():
        score = lexical[seq] + weight * scale * closeness[seq] if seq in closeness else lexical[seq]
        if names and speaker(message.text) in names:
            score *= 1 + ranking.speaker_boost
        day = day_of(message.created_at)
        if dates and on_date(day, dates):
            score *= 1 + ranking.date_boost
        out.append(new(Hit, (score, seq, day, message)))
    return out


def day_prior(hits: list[Hit], share: float, ranking: Ranking) -> list[Hit]:
    """Each hit also scores `share` of how well its day matches the query (the sum of that day's
    day_top best scores): a day is a session, and a session about the topic holds the answer more
    often than one stray match elsewhere."""
    by_day: dict[str, list[float]] = {}
    for hit in hits:
        by_day.setdefault(hit.day, []).append(hit.score)
    top = ranking.day_top
    day_score = {d: sum(heapq.nlargest(top, v)) if len(v) > top else sum(v) for d, v in by_day.items()}
    return [new(Hit, (hit.score + share * day_score[hit.day], hit.seq, hit.day, hit.message)) for hit in hits]


def distinct(hits: list[Hit]) -> list[Hit]:
    """Of hits with the same text (case and spacing aside), the best-scoring one (the newest on a
    tie): "Thanks, that worked." three times tells nothing the first did not."""
    best: dict[str, Hit] = {}
    for hit in hits:
        key = text_key(hit.message.text)
        have = best.get(key)
        if have is None or (hit.score, hit.seq) > (have.score, have.seq):
            best[key] = hit
    return list(best.values())


def rerank(
    hits: list[Hit], own: dict[int, Parts], names: set[str], when: bool, limit: int, ranking: Ranking
) -> list[Hit]:
    """The rerank_from (or `limit`, when more) best hits, best first, with the talk-about-the-other
    and when-question weights applied: a named speaker's message whose matching words sit next to
    "you / your" (not "I / my") weighs other_drop less; for a "when" question a message that
    mentions a time weighs when_boost more."""
    best = heapq.nlargest(max(ranking.rerank_from, limit), hits, key=lambda h: (h.score, h.seq))
    other_drop = ranking.other_drop if names else 0.0
    when_boost = ranking.when_boost if when else 0.0
    if not other_drop and not when_boost:
        return best
    out = []
    for hit in best:
        score = hit.score
        text = hit.message.text
        if (
            other_drop
            and speaker(text) in names
            and about_the_other(text, own.get(hit.seq, ()), ranking.self_reach)
        ):
            score *= 1 - other_drop
        if when_boost and TIME.search(text):
            score *= 1 + when_boost
        out.append(new(Hit, (score, hit.seq, hit.day, hit.message)))
    out.sort(key=lambda h: (-h.score, -h.seq))
    return out


def ranked(
    hits: list[Hit],
    own: dict[int, Parts],
    names: set[str],
    when: bool,
    is_list: bool,
    limit: int,
    ranking: Ranking,
) -> list[Hit]:
    """The `limit` best hits. A list question takes its list_head first hits ranked with
    list_day_share as the day prior (a day already holding strong matches counts against its
    further ones, so they spread over sessions); the hits after them keep day_share's order."""
    head: list[Hit] = []
    if ranking.list_head and is_list:
        spread = day_prior(hits, ranking.list_day_share, ranking)
        if ranking.distinct_text:
            spread = distinct(spread)
        head = rerank(spread, own, names, when, ranking.list_head, ranking)[: ranking.list_head]
    if ranking.day_share:
        hits = day_prior(hits, ranking.day_share, ranking)
    if ranking.distinct_text:
        hits = distinct(hits)
    out = rerank(hits, own, names, when, limit, ranking)
    if head:
        taken = {text_key(h.message.text) for h in head}
        out = head + [h for h in out if text_key(h.message.text) not in taken]
    return out[:limit]
