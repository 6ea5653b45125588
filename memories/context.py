"""The context builder: the one function that decides what a model sees.

Used by decorate, by the pipeline's llm task and by the console's "What the model sees" tab.
Nothing here calls a model: decorate must stay O(window). Only committed entries are read.

Cost bound, whatever the memory's size: the window (the rows that fit the budget, through the
(memory, seq) index), at most `selectors.active_facts`' 200 newest active facts (ranked here by
relevance to the new message in linear time: shared words, and with an embedding provider the
query's cosine with the stored vectors of the facts' source messages), and one `recall.search` — at most
recall.query.MAX_QUERY_TERMS + Ranking.max_pair_reads index reads of Ranking.per_term_cap rows
(12·200 + 10·200 = 4,400 rows at most), 4·Ranking.spread_from = 120 neighbour rows by (memory, seq)
(two each side), and with
an embedding provider one query embedding plus embeddings.STATS_SAMPLE + 2·CODE_CANDIDATES stored
vector rows (each at most 1 + embeddings.PIECE_MAX vectors: the message's and its sentences'), one
pass over the memory's codes (memories/embeddings/search.py states that bound) and
recall.Ranking.fuse_depth (120) rows by (memory, seq).
The recall block (sizes and shares: `ContextParameters`) is `recall_share` of what the budget
leaves after the new messages and facts (150..2,000 tokens; `recall_lookback_share` when the
question looks back, but never the window's newest exchange), up to `recall_max_snippets`
snippets, each message shown whole up to `recall_whole_chars`, and counts inside the budget; a
snippet said word for word by an earlier-listed one is left out (its room goes to the next
distinct one), and so is a hit the window shows. The snippets are chosen best first and listed in
the order they were said, as "- role: text" under one heading per day (the date once, not on every
line: at a small budget that is room for more of them). Room the block leaves goes back to the
window. At most three fits of the window (the usual one, the looking-back one, the grown one),
each one or two reads of its index as before: O(window).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from common.context_headers import FACTS_HEADER, FAILURES_HEADER, RECALL_HEADER, SUMMARY_HEADER
from common.messages import text_of
from common.tokens import message_tokens, text_tokens
from memories import embeddings
from memories import recall as recall_index
from memories.models import Memory, Thread
from memories.recall.text import stem
from memories.selectors import ContextReads, Window, fact_sources, thread_view


@dataclass(frozen=True, slots=True)
class ContextParameters:
    """How `context_build` shares the budget between its blocks. The default (`PARAMETERS`) is what
    decorate, the llm task and the console use; tests and benches pass their own. What each value
    was measured against lives in docs/tuning/decorate.md."""

    # --- the facts block
    facts_token_cap: int = 1000
    fact_semantic_floor: float = (
        0.35  # cosine of the query with a fact's source message below which it adds nothing
    )

    # --- the failures block
    failures_token_cap: int = 1000
    failure_row_chars: int = 300  # a raw error (a stack trace, say) is one line cut to this length

    # --- the recall block's size
    recall_share: float = 0.7  # of what budget_tokens leaves after the new messages and facts
    recall_min_tokens: int = 150  # a smaller share gets no recall block (the window keeps it)
    recall_max_tokens: int = 2000
    # The block's share when the question looks back (its best match is older than the newest turns
    # the window shows), instead of `recall_share`: the best share on LoCoMo's tuning half, with and
    # without embeddings. The window keeps the newest ~5 % (about the last exchange at 2,000 tokens)
    # and the new messages, and never less than the newest exchange the usual window holds (at
    # 250-400 tokens 5 % is no turn).
    recall_lookback_share: float = 0.95
    # The room the block leaves unused goes back to the window (one more read of it) when that adds
    # at least this share of the window's tokens (so never at large budgets, where it would add little).
    recall_refill_share: float = 0.1

    # --- the recall block's snippets
    recall_max_snippets: int = 50
    recall_min_relative: float = 0.15  # a snippet scoring below this share of the best is left out
    # A recalled message up to this long is shown whole; a longer one as recall's SNIPPET_CHARS
    # window around the match. Never cut to fit more: a cut snippet can hide what it was recalled for.
    recall_whole_chars: int = 1000


PARAMETERS = ContextParameters()


@dataclass
class Context:
    messages: list[dict] = field(default_factory=list)  # history window + new messages
    history_count: int = 0
    history_tokens: int = 0
    new_tokens: int = 0
    first_turn: int | None = None
    facts: list[dict] = field(default_factory=list)
    recalled: list[dict] = field(default_factory=list)
    digests: list[dict] = field(default_factory=list)
    summary: str = ""
    context_text: str = ""

    def instructions_with(self, own: str) -> str:
        if own and self.context_text:
            return own + "\n\n" + self.context_text
        return own or self.context_text


def rank_facts(
    facts: list[tuple],
    query: str,
    similarity: dict[str, float] | None = None,
    *,
    params: ContextParameters = PARAMETERS,
) -> list[tuple]:
    """Active facts (id, text, tokens), newest first, re-ordered by relevance to `query`: the
    lexical part (rarer shared words count more: IDF over these facts, scaled to the best fact)
    plus, with an embedding provider, the semantic part (`similarity`: the query's cosine with
    the fact's source message, above `fact_semantic_floor`, scaled to [0, 1]); facts scoring 0 and
    ties keep their recency order. Linear in the facts read (at most the selector's limit)."""
    if not facts:  # nothing to rank: skip the query's terms
        return []
    terms = {stem(t) for t in recall_index.query_terms(query)}
    if not terms and not similarity:
        return list(facts)
    words = [{stem(w) for w in recall_index.query_terms(text) if stem(w) in terms} for _, text, _ in facts]
    df: dict[str, int] = {}
    for found in words:
        for w in found:
            df[w] = df.get(w, 0) + 1
    n = len(facts)
    lexical = [sum(math.log(1 + n / df[w]) for w in found) for found in words]
    best = max(lexical) or 1.0
    similarity = similarity or {}
    floor = params.fact_semantic_floor
    scores = [
        lexical[i] / best + max(0.0, similarity.get(fact[0], 0.0) - floor) / (1 - floor)
        for i, fact in enumerate(facts)
    ]
    order = sorted(range(n), key=lambda i: (-scores[i], i))
    return [facts[i] for i in order]


def _facts_block(
    active: list[tuple], query: str = "", query_vector=None, *, params: ContextParameters = PARAMETERS
) -> tuple[list[dict], str]:
    """`active`: the memory's active facts (`selectors.active_facts`). `query_vector`: a callable
    answering the query's (model key, vector) or None, called only when there are facts to order
    (so a memory without facts costs no embedding)."""
    similarity = None
    if len(active) > 1 and query.strip() and query_vector is not None:
        vector = query_vector()
        if vector is not None:
            similarity = embeddings.source_similarity(
                sources=fact_sources(fact_ids=[f[0] for f in active]), query=vector
            )
    facts, lines, used = [], [], 0
    for fact_id, text, tokens in rank_facts(active, query, similarity, params=params):
        cost = tokens or text_tokens(text) + 1
        if used + cost > params.facts_token_cap:
            continue  # a smaller, less relevant fact may still fit
        used += cost
        facts.append({"id": fact_id, "text": text})
        lines.append(f"- {text}")
    return facts, (FACTS_HEADER + "\n" + "\n".join(lines)) if lines else ""


def recall_token_cap(
    budget_tokens: int, share: float | None = None, *, params: ContextParameters = PARAMETERS
) -> int:
    """The recall block's size follows the budget: `share` (default `recall_share`) of it, up to
    `recall_max_tokens` (1,400 of 2,000 tokens, 2,000 at the default 60,000); 0 (no recall block)
    when that is less than `recall_min_tokens`. It counts inside the budget: the window is read
    with this much reserved."""
    share = params.recall_share if share is None else share
    cap = min(params.recall_max_tokens, int(max(budget_tokens, 0) * share))
    return cap if cap >= params.recall_min_tokens else 0


def _recall_line(hit: dict, thread: str | None = None) -> str:
    """One snippet: its speaker, and the thread it was said in when that is not `thread` (the
    conversation being decorated)."""
    where = f"(thread {hit['thread']}) " if hit.get("thread", thread) != thread else ""
    return f"- {where}{hit['role']}: {hit['snippet']}"


def _last_turn_tokens(history: list[dict]) -> int:
    """The tokens of the newest turn in `history` (its last user message and what follows it)."""
    start = next(
        (i for i in range(len(history) - 1, -1, -1) if history[i].get("role") == "user"), len(history)
    )
    return sum(message_tokens(m) for m in history[start:])


def _day_line(date: str) -> str:
    return f"{date}:"


def _recall_render(items: list[dict], thread: str | None = None) -> str:
    """The block's text: the recalled messages in the order they were said, one heading per day
    (a date said once for all of that day's lines leaves room for more of them), a snippet from
    another thread than `thread` naming it."""
    lines, day = [RECALL_HEADER], None
    for item in sorted(items, key=lambda i: i["seq"]):
        if item["date"] != day:
            day = item["date"]
            lines.append(_day_line(day))
        lines.append(_recall_line(item, thread))
    return "\n".join(lines)


def _recall_hits(
    memory: Memory,
    query: str,
    before_seq: int | None,
    query_vector=None,
    *,
    params: ContextParameters = PARAMETERS,
) -> list[dict]:
    """Recall's ranked hits older than `before_seq` for the block (at most `recall_max_snippets`)."""
    if not query.strip():
        return []
    # The only embedding on this path: the query's (stored text was embedded by the worker),
    # `_query_vector`'s callable, shared with the facts block (None: embeddings are off).
    # search reads the words' candidates before it calls it.
    return recall_index.search(
        memory_id=memory.id,
        query=query,
        limit=params.recall_max_snippets,
        before_seq=before_seq,
        query_vector=query_vector,
        whole_chars=params.recall_whole_chars,
    )


def _in_window(item: dict, thread: str | None, before_seq: int | None) -> bool:
    """The window shows it: said in `thread` (the one decorated) at or after `before_seq`."""
    return before_seq is not None and item["seq"] >= before_seq and item.get("thread", thread) == thread


def _recall_line_cost(item: dict, thread: str | None, days: set[str]) -> int:
    """A snippet's tokens in the block, its day's heading included when `days` (those already
    shown) does not hold it yet."""
    day = 0 if item["date"] in days else text_tokens(_day_line(item["date"])) + 1
    return text_tokens(_recall_line(item, thread)) + 1 + day


def _recall_assemble(
    hits: list[dict],
    cap: int,
    before_seq: int | None = None,
    thread: str | None = None,
    *,
    params: ContextParameters = PARAMETERS,
) -> tuple[list[dict], str, int]:
    """As many of `hits` (but those the window shows: `thread`'s from `before_seq` on) as fit
    `cap` tokens and score well enough, chosen best first, a text said word for word again only
    once. Shown in the order they were said, under a heading per day (`_recall_render`); a
    line's cost includes its day's heading when it is the first of that day. Returns (recalled,
    text, tokens used)."""
    if not hits:
        return [], "", 0
    used = text_tokens(RECALL_HEADER) + 1
    floor = hits[0]["score"] * params.recall_min_relative
    items: list[dict] = []
    shown: set[int] = set()
    said: set[str] = set()
    days: set[str] = set()
    for hit in hits:
        if hit["score"] < floor or _in_window(hit, thread, before_seq):
            continue
        if used >= cap:
            break
        # A message said word for word again ("Thanks, that worked.") tells the model nothing new:
        # its best-scoring copy stands for all, and the room goes to the next distinct snippet.
        if hit["entry_id"] in shown or hit["snippet"] in said:
            continue
        spend = _recall_line_cost(hit, thread, days)
        if used + spend > cap:
            continue
        used += spend
        shown.add(hit["entry_id"])
        said.add(hit["snippet"])
        days.add(hit["date"])
        items.append(hit)
    if not items:
        return [], "", 0
    return items, _recall_render(items, thread), used


def _failure_line(turn: int, kind: str, task_id: str, content: str, row_chars: int) -> str:
    if kind == "digest":
        return f"- (turn {turn}) {content}"
    # A raw error (policy off / keep_all) can be a whole stack trace: one capped line.
    text = " ".join((content or "").split())
    if len(text) > row_chars:
        text = text[: row_chars - 1].rstrip() + "…"
    return f"- (turn {turn}) task '{task_id}' error: {text}"


def _failures_block(
    reads: ContextReads, from_turn: int | None, cap_tokens: int, row_chars: int
) -> tuple[list[dict], str, int]:
    """The newest failures of turns from `from_turn` on that fit `cap_tokens` (the newest one
    always), oldest first; returns (digests, text, tokens)."""
    if from_turn is None:
        return [], "", 0
    kept: list[tuple[dict | None, str]] = []
    used = text_tokens(FAILURES_HEADER) + 1
    for turn, kind, task_id, content in reversed(reads.failures(from_turn)):
        line = _failure_line(turn, kind, task_id, content, row_chars)
        cost = text_tokens(line) + 1
        if kept and used + cost > cap_tokens:
            break
        used += cost
        digest = (
            {"type": "errorDigest", "taskId": task_id, "text": content, "turn": turn}
            if kind == "digest"
            else None
        )
        kept.append((digest, line))
    if not kept:
        return [], "", 0
    kept.reverse()
    digests = [d for d, _ in kept if d is not None]
    return digests, FAILURES_HEADER + "\n" + "\n".join(line for _, line in kept), used


def _query_vector(memory: Memory, query: str, start: bool):
    """A callable answering the query's embedding, computed at most once (None: embeddings off).
    `start`: recall will search (the history does not fit whole), so the embedding begins now and
    runs while the window and the index are read (`embeddings.embed_query_soon`); otherwise it is
    computed when first asked for."""
    if not query.strip() or not embeddings.enabled(memory.project):
        return None
    if start:  # the embedding's future answers it, once computed, as often as asked
        return embeddings.embed_query_soon(memory.project, query)
    return embeddings.embed_query_when_asked(memory.project, query)


def _expected_rows(memory: Memory, budget_tokens: int, new_tokens: int) -> int | None:
    """The window's first index read sized from the memory's average message, so a typical window
    is one read (None: the memory has no messages to average)."""
    if not (memory.message_count and memory.token_count):
        return None
    expected = int((budget_tokens - new_tokens) * memory.message_count / memory.token_count * 1.1) + 16
    return min(expected, 4096) if expected else None


@dataclass(frozen=True, slots=True)
class _Fitting:
    """What every fit of one context's window shares."""

    reads: ContextReads
    budget_tokens: int
    new_tokens: int
    new_has_user: bool
    new_turn: int | None  # the turn of the new messages: its failures show even when no history fits
    params: ContextParameters


@dataclass(frozen=True, slots=True)
class _Fit:
    """One fit of the window, and the failures block of its turns."""

    window: Window
    digests: list[dict]
    failures_text: str
    failures_tokens: int


def _fit_failures(fitting: _Fitting, window: Window) -> tuple[list[dict], str, int]:
    """The failures block of the turns `window` covers (of the new turn when it is empty)."""
    from_turn = window.first_turn if window.first_turn is not None else fitting.new_turn
    cap_tokens = min(fitting.params.failures_token_cap, max(fitting.budget_tokens - fitting.new_tokens, 0))
    return _failures_block(fitting.reads, from_turn, cap_tokens, fitting.params.failure_row_chars)


def _fit(fitting: _Fitting, reserved: int) -> _Fit:
    """The window with `reserved` tokens kept for the rest, and the failures of its turns."""
    reads, budget = fitting.reads, fitting.budget_tokens
    window = reads.window(budget=budget, reserved=reserved, new_has_user=fitting.new_has_user)
    digests, text, tokens = _fit_failures(fitting, window)
    if tokens and window.tokens + reserved + tokens > budget:
        # The failures block counts in the budget: make room for it (a shorter window covers fewer
        # turns, so the block can only shrink).
        window = reads.window(budget=budget, reserved=reserved + tokens, new_has_user=fitting.new_has_user)
        digests, text, tokens = _fit_failures(fitting, window)
    return _Fit(window, digests, text, tokens)


def _first_seq_or(window: Window, before_seq: int | None) -> int | None:
    """Where the window's messages begin (`before_seq` when it shows none)."""
    return window.first_seq if window.first_seq is not None else before_seq


def _recall_block(
    fitting: _Fitting,
    fit: _Fit,
    *,
    memory: Memory,
    thread: Thread,
    query: str,
    query_vector,
    before_seq: int | None,
    others: bool,
    reserved: int,
    recall_cap: int,
    lookback_cap: int,
) -> tuple[_Fit, list[dict], str]:
    """The recall block (recalled, text) of at most `recall_cap` tokens, or `lookback_cap` when the
    question looks back, and the window fit it leaves: refitted when the block takes more of a
    small budget, or gives back room it left unused. `reserved`: the new messages' and the facts'
    tokens."""
    params = fitting.params
    outside = _first_seq_or(fit.window, before_seq)
    if lookback_cap > recall_cap:
        # A small budget: the question may look back (its best match is older than the newest
        # turns the window shows), and then the recall block takes more of the budget. One
        # search over all the history before the new messages tells: its hits inside the
        # window that is kept are left out of the block (the window shows them whole).
        hits = _recall_hits(memory, query, before_seq, query_vector, params=params)
        # (An empty window, a new thread's, keeps nothing: every hit looks back.)
        if hits and not _in_window(hits[0], thread.name, outside):
            # The newest exchange stays in the window whatever the share: the block grows only
            # into what is left after it (and its failures), so the model still sees what it
            # just said.
            lookback_cap = min(
                lookback_cap,
                fitting.budget_tokens
                - reserved
                - _last_turn_tokens(fit.window.messages)
                - fit.failures_tokens,
            )
            if lookback_cap > recall_cap:
                recall_cap = lookback_cap
                fit = _fit(fitting, reserved + recall_cap)
                outside = _first_seq_or(fit.window, before_seq)
    else:
        # Other threads' messages can be newer than this thread's window: search all the
        # history before the new messages, and leave out what the window shows.
        hits = _recall_hits(memory, query, before_seq if others else outside, query_vector, params=params)
    recalled, text, used = _recall_assemble(hits, recall_cap, outside, thread.name, params=params)
    spare = recall_cap - (used if text else 0)
    if spare > 0 and spare >= params.recall_refill_share * fit.window.tokens:
        # The block left room: the window takes it back (one more read of the window's index;
        # only when it adds at least `recall_refill_share` more history).
        grown = _fit(fitting, reserved + recall_cap - spare)
        if grown.window.tokens >= fit.window.tokens:  # (more failures to show could make it shorter instead)
            fit = grown
            first_seq = fit.window.first_seq
            if first_seq is not None and any(_in_window(h, thread.name, first_seq) for h in recalled):
                recalled, text, _ = _recall_assemble(
                    hits, recall_cap - spare, first_seq, thread.name, params=params
                )
    return fit, recalled, text


def context_build(
    *,
    memory: Memory,
    thread: Thread | None = None,
    new_messages: list[dict],
    budget_tokens: int,
    recall: bool = True,
    before_seq: int | None = None,
    new_turn: int | None = None,
    params: ContextParameters = PARAMETERS,
) -> Context:
    """Build what the model sees for `new_messages` on top of `memory`.

    `thread`: the conversation decorated (`selectors.thread_view`; None: the default thread):
    the window, its failures and the summary are its own; facts and recall span the memory.
    `before_seq`: read history strictly before this sequence number (the first stored new
    message), so freshly stored new messages are not counted twice. `new_turn`: the turn the new
    messages belong to, so its failures show even when no history fits. `params`: the blocks'
    sizes and shares (`PARAMETERS` unless a test or a bench passes its own).
    """
    thread = thread if thread is not None else thread_view(memory=memory)
    # Another thread holds messages: recall has something outside the window even when this
    # thread's history fits it whole.
    others = memory.message_count > thread.message_count
    new_tokens = sum(message_tokens(m) for m in new_messages)
    # The facts, the window's first read and the failures: one round trip on PostgreSQL.
    reads = ContextReads(
        memory_id=memory.id,
        thread=thread.name,
        before_seq=before_seq,
        expected_rows=_expected_rows(memory, budget_tokens, new_tokens),
        new_turn=new_turn,
        message_count=thread.message_count,
    )
    fitting = _Fitting(
        reads=reads,
        budget_tokens=budget_tokens,
        new_tokens=new_tokens,
        new_has_user=any(m.get("role") == "user" for m in new_messages),
        new_turn=new_turn,
        params=params,
    )

    query = "\n".join(text_of(m.get("content")) for m in new_messages if m.get("role") == "user")
    # The facts block and the recall block count inside the budget too: the window is read with
    # their room reserved (the recall block's cap, when the history does not fit whole).
    query_vector = _query_vector(
        memory, query, start=recall and (others or thread.token_count + new_tokens > budget_tokens)
    )
    ctx_facts, facts_text = _facts_block(reads.facts(), query, query_vector, params=params)
    facts_tokens = text_tokens(facts_text) + 2 if facts_text else 0
    reserved = new_tokens + facts_tokens
    recall_cap = lookback_cap = 0
    if recall and query.strip() and (others or thread.token_count + reserved > budget_tokens):
        recall_cap = recall_token_cap(budget_tokens - reserved, params=params)
        lookback_cap = recall_token_cap(budget_tokens - reserved, params.recall_lookback_share, params=params)

    fit = _fit(fitting, reserved + recall_cap)
    ctx_recalled: list[dict] = []
    recall_text = ""
    # When the whole history fits the window there is nothing outside it to recall: skip the index.
    if recall_cap and (others or not fit.window.complete):
        fit, ctx_recalled, recall_text = _recall_block(
            fitting,
            fit,
            memory=memory,
            thread=thread,
            query=query,
            query_vector=query_vector,
            before_seq=before_seq,
            others=others,
            reserved=reserved,
            recall_cap=recall_cap,
            lookback_cap=lookback_cap,
        )
    history = fit.window.messages
    summary = thread.summary or ""
    summary_text = (SUMMARY_HEADER + "\n" + summary) if summary else ""
    return Context(
        messages=history + list(new_messages),
        history_count=len(history),
        history_tokens=fit.window.tokens,
        new_tokens=new_tokens,
        first_turn=fit.window.first_turn,
        facts=ctx_facts,
        recalled=ctx_recalled,
        digests=fit.digests,
        summary=summary,
        context_text="\n\n".join(t for t in (facts_text, summary_text, recall_text, fit.failures_text) if t),
    )
