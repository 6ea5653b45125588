"""Compaction: fold committed history that no longer fits the window into the rolling summary.

Each thread folds its own history (SPEC 4.10): the default thread's summary is the memory row's,
a named thread's its `Thread` row's. "Outside the window" is judged with the memory's last used
`budget_tokens` (stored on each decorate). The raw entries stay for recall and inspection; only
the summary and its `summary_upto_seq` change, so a re-run finds nothing new to fold (idempotent).
The summary is extractive offline (the most informative sentences, with their turns) and
written by the project's model when one is configured.
"""

from __future__ import annotations

import itertools
import logging
import re

from django.db import transaction

from memories.facts.llm import summarize_with
from memories.models import DEFAULT_THREAD, Entry, Memory, Thread
from memories.recall import STOPWORDS
from memories.selectors import memory_window

log = logging.getLogger("threadless.compaction")

# Fold once this many tokens of committed history sit outside the window, unsummarised.
COMPACT_MIN_TOKENS = 2000
COMPACT_CHUNK = 400  # messages folded per pass
SUMMARY_MAX_CHARS = 3000
LINES_PER_PASS = 8

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[^\W_]+")


def _content_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in STOPWORDS]


def extractive_lines(rows: list[tuple], limit: int = LINES_PER_PASS) -> list[str]:
    """The most informative sentences of (turn, role, content) rows, in conversation order.

    A sentence scores by how many content words it has that the rest of the chunk repeats
    (what the stretch was about); user sentences weigh more, questions less.
    """
    sentences = []
    freq: dict[str, int] = {}
    for turn, role, content in rows:
        for sentence in _SENTENCE.split(content or ""):
            sentence = " ".join(sentence.split())
            if len(sentence) < 12:
                continue
            words = set(_content_words(sentence))
            if len(words) < 2:
                continue
            for w in words:
                freq[w] = freq.get(w, 0) + 1
            sentences.append((turn, role, sentence, words))
    scored = []
    for order, (turn, role, sentence, words) in enumerate(sentences):
        score = sum(min(freq[w], 4) for w in words) / (1 + len(words) ** 0.5)
        score *= 1.5 if role == "user" else 1.0
        score *= 0.6 if sentence.endswith("?") else 1.0
        scored.append((score, order, turn, role, sentence))
    best = sorted(scored, reverse=True)[:limit]
    out = []
    for _, _, turn, role, sentence in sorted(best, key=lambda s: s[1]):
        who = "User" if role == "user" else "Assistant"
        out.append(f"- (turn {turn}) {who}: {sentence[:300]}")
    return out


def _trim(summary: str) -> str:
    """Keep the newest lines within the cap (older ones are still in recall)."""
    lines = summary.splitlines()
    while lines and len("\n".join(lines)) > SUMMARY_MAX_CHARS:
        lines.pop(0)
    return "\n".join(lines)


def memory_compact(
    *,
    memory_id: str,
    complete=None,
    min_tokens: int = COMPACT_MIN_TOKENS,
    thread: str = DEFAULT_THREAD,
    passes: int | None = None,
) -> dict:
    """Fold the thread's unsummarised history outside its window into its summary, COMPACT_CHUNK
    messages a pass (at most `passes` of them: `more` says the rest waits for the next run).
    Returns what it did."""
    memory = Memory.objects.filter(pk=memory_id).first()
    if memory is None:
        return {"folded": 0}
    if thread != DEFAULT_THREAD:
        memory = Thread.objects.filter(memory_id=memory_id, name=thread).first()  # the summary's holder
        if memory is None:
            return {"folded": 0}
    budget = memory.last_budget_tokens  # the thread's last decorate's
    window = memory_window(
        memory_id=memory_id, thread=thread, before_seq=None, budget=budget, reserved=0, new_has_user=True
    )
    if window.first_seq is None:
        return {"folded": 0}
    outside = Entry.objects.filter(
        memory_id=memory_id,
        thread=thread,
        kind="message",
        committed=True,
        seq__gt=memory.summary_upto_seq,
        seq__lt=window.first_seq,
    )
    folded = 0
    for done in itertools.count():
        if passes is not None and done == passes:
            return {"folded": folded, "more": True}
        rows = list(
            outside.filter(seq__gt=memory.summary_upto_seq)
            .order_by("seq")
            .values_list("seq", "turn", "role", "content", "tokens")[:COMPACT_CHUNK]
        )
        if not rows or sum(r[4] for r in rows) < min_tokens and len(rows) < COMPACT_CHUNK:
            break
        summary = memory.summary
        text_rows = [(r[1], r[2], r[3]) for r in rows if r[2] in ("user", "assistant")]
        if complete is not None:
            try:
                lines = [
                    f"(turn {t}) {'User' if r == 'user' else 'Assistant'}: {c[:500]}" for t, r, c in text_rows
                ]
                summary = summarize_with(complete, summary, lines, SUMMARY_MAX_CHARS)
            except Exception as exc:  # noqa: BLE001 - the extractive summary is always there
                log.warning("memory %s: model summary failed (%s); using the extractive one", memory_id, exc)
                summary = _trim("\n".join(x for x in [summary, *extractive_lines(text_rows)] if x))
        else:
            summary = _trim("\n".join(x for x in [summary, *extractive_lines(text_rows)] if x))
        upto = rows[-1][0]
        with transaction.atomic():
            # Conditional update: a concurrent run that already folded this stretch wins.
            changed = (
                type(memory)
                .objects.filter(pk=memory.pk, summary_upto_seq=memory.summary_upto_seq)
                .update(summary=summary, summary_upto_seq=upto)
            )
        if not changed:
            break
        memory.summary, memory.summary_upto_seq = summary, upto
        folded += len(rows)
    return {"folded": folded}
