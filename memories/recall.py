"""Recall: full-text search over committed messages, behind one interface.

SQLite FTS5 on the embedded default, PostgreSQL full-text (tsvector + GIN) in production; both
tables are created by migration `0002_recall_index`. Decorate asks the index for the top few
matches outside the window; nothing here ranks the whole memory in Python, and nothing here
calls a model.

Interface: `index_entries`, `unindex_entries`, `search`, `forget_memory`. Index rows are keyed
by the entry id, so indexing is idempotent (a re-run replaces the same rows).
"""

from __future__ import annotations

import heapq
import json
import math
import re
from datetime import UTC, datetime

from django.db import connection, transaction

from common.messages import text_of
from memories import embeddings
from memories.models import Entry, Memory

TABLE = "memories_recall"
INDEXED_ROLES = ("user", "assistant")
SNIPPET_CHARS = 240
SNIPPET_SPOTS = 48  # occurrences of query terms weighed when placing a snippet's window
MAX_QUERY_TERMS = 12
PER_TERM_CAP = 200  # index rows per read: bounds recall's cost whatever the memory's size
MAX_PAIR_READS = 10  # conjunctive reads of two common terms per search
PREV_SHARE = 0.7  # share of the previous message's score a message gets (it may be the answer to it)
NEXT_SHARE = 0.3  # share of the next message's score a message gets
# Two messages away: the same speaker's next message, after the other's question or reply ("I had a
# picnic with friends from church" … "what did you do?" … "charades and a scavenger hunt!").
PREV2_SHARE = 0.4
NEXT2_SHARE = 0.2
SPEAKER_BOOST = 1.5  # a message by a speaker the query names ("Name: text") weighs this much more
NEIGHBOUR_MIN_WORDS = 5
# Nearest vectors that take part in the ranking (with a provider on). LoCoMo's tuning half, local
# provider (round 7): 50 → 120 took decorate@2000 0.841 → 0.859 (multi-hop and open-domain answers
# that share no word with the question sit past the 50th nearest); 80–300 all within ±0.01.
FUSE_DEPTH = 120
# A nearest vector adds up to this share of the best lexical score (its cosine rescaled 1..0 over
# the FUSE_DEPTH nearest) when some message matches all of the query's words. Measured on
# LoCoMo's tuning half (docs/benchmarks.md): 0.5 best of 0.2–0.8; reciprocal rank fusion with
# equal weights lost to lexical alone.
DENSE_WEIGHT = 0.5
# ... and this share when no message matches any of them; in between it follows the query's
# lexical coverage c (the largest share of its words' IDF one candidate matches) as
# DENSE_WEIGHT + (DENSE_WEIGHT_WEAK - DENSE_WEIGHT)·(1 - c)^WEAK_POWER. A paraphrase ("What do I
# swallow before bed?" for "I'm on simvastatin every evening") leaves the lexical side with stray
# matches of one common word, which should not outweigh meaning. Tuned on the own corpus's dev
# half (docs/benchmarks.md §7, rounds 5 and 7); LoCoMo's tuning half (median c 0.67) is not worse for it.
DENSE_WEIGHT_WEAK = 2.5
WEAK_POWER = 3.0  # (1 - coverage) ** 3: only a weak match moves the weight much
# A stored question's closeness counts this share: a question's vector sits near a question query by
# its form ("What do I swallow before bed?" next to "How much water should I drink a day?"), while
# the answer is a statement. Only the dense side: a question's words still count whole.
DENSE_QUESTION = 0.5
# A query whose words the memory mostly never used is a paraphrase: when UNSAID_SHARE of its IDF
# mass is in words no message has and the nearest vector stands DENSE_STANDOUT standard deviations
# above the scanned ones' mean, and the query names no speaker, meaning weighs at least
# DENSE_WEIGHT_UNSAID (round 9: own corpus dev top 3 0.753 → 0.806, MiniLM alone 0.809; LoCoMo's
# tuning half unchanged, see docs/benchmarks.md §7).
UNSAID_SHARE = 0.4
DENSE_STANDOUT = 2.8
DENSE_WEIGHT_UNSAID = 3.0
# When the query names a speaker (a "Name: text" dialogue, where a turn answers the one before it), a
# stored vector's closeness also takes DENSE_PREV_SHARE of the previous message's cosine with the
# query ("Did you go to the concert?" … "Yes! It was amazing"): `embeddings.neighbourhood`'s
# prev_share, over the vectors it scans anyway. Round 10 (docs/benchmarks.md §7), LoCoMo's tuning half,
# local: search top 5 / top 10 / decorate@2000 0.697 / 0.783 / 0.854 → 0.715 / 0.796 / 0.856; the own
# corpus (no named speakers) untouched. For every query it cost the own corpus's dev half 0.806 → 0.799
# (0.2) or 0.756 (0.4): its fact lines sit between unrelated turns.
DENSE_PREV_SHARE = 0.3
SPREAD_FROM = 30  # how many of the best candidates spread to their neighbours
BM25_K1, BM25_B = 1.2, 0.5
DATE_BOOST = 3.0  # a message written on a date the query names weighs this much more
NAMED_SPEAKER_TERM = 1.0  # weight of a query term that is a named speaker, as a word of a message
COMMON_WEIGHT = 0.25  # a term that fills its cap says little about which message is meant
DAY_SHARE = 0.2  # a message also scores this share of its day's DAY_TOP best scores (session prior)
DAY_TOP = 3
# Of two of the best candidates matching the same query terms and sharing SUPERSEDE_SHARED words
# (the query's included), at least SUPERSEDE_OVERLAP of the shorter one's, the newer ranks at
# least as high as the older: a later statement about the same thing usually corrects it ("the
# code is 2680" … "they reset the code, it's 8026 now").
SUPERSEDE_SHARED = 2
SUPERSEDE_OVERLAP = 0.5
# The selection step (round 7), over the RERANK_FROM best candidates only (bounded whatever the
# memory's size). A message by a speaker the query names whose matching words sit next to "you /
# your" and not next to "I / my / we" talks about the other person ("What has Ana painted?" vs
# "Ana: that painting of yours is lovely"): it weighs OTHER_DROP less. Words "next to" = within
# SELF_REACH words.
RERANK_FROM = 100  # at least RECALL_MAX_SNIPPETS (decorate asks for 50)
OTHER_DROP = 0.2
SELF_REACH = 5
# A "when" question ("When did…", "In what year…", "How long ago…") favours messages that carry a
# time ("yesterday", "last Friday", "two weeks ago", "in May"): WHEN_BOOST more.
WHEN_BOOST = 0.5
# Of messages saying the same text (case and spacing aside), only the best-scoring one is a hit:
# "Thanks, that worked." three times in a top 3 tells nothing the first did not.
DISTINCT_TEXT = True
# A list question ("What activities…", "Which cities has…", "What has Ana painted?", "… both …", "How
# many…") asks for things said in several sessions (LoCoMo's multi-hop questions), while the day
# prior lifts the matches of one session together. For such a question the LIST_HEAD first hits are
# ranked with LIST_DAY_SHARE instead of DAY_SHARE (a day already holding strong matches counts
# against its further ones); the hits after them keep DAY_SHARE's order, so decorate's deeper recall
# block keeps the session's neighbours that only the positive prior lifts. LoCoMo tuning half
# (round 9): multi-hop top 10 0.18 → 0.26, decorate@2000 unchanged; -0.05 … -0.2 within ±0.014,
# -0.3 lower; without LIST_HEAD (the whole ranking) decorate's multi-hop fell 0.42 → 0.39.
LIST_DAY_SHARE = -0.1
LIST_HEAD = 10

# Words too common to say anything about what a message is about.
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
once only or other our ours ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves im ive id dont does doesnt didnt cant wont
know tell remember please say said again also still yes ok okay hi hello hey thanks thank today anything something
""".split())

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_WORD_APOS = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)?", re.UNICODE)
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = r"(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
# Dates a question names ("on 16 June, 2023", "June 16th", "in May 2023", "2023-06-16"): fixed
# alternatives and bounded repeats, no nesting, so matching runs in linear time.
_DATES = re.compile(
    r"\b(?:(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\b,?(?:\s+(\d{4}))?"
    r"|" + _MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?\b,?(?:\s+(\d{4}))?"
    r"|" + _MONTH + r",?\s+(\d{4})"
    r"|(\d{4})-(\d{2})-(\d{2}))\b", re.IGNORECASE)


_DAYNAMES = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# A question asking when (matched at its start only).
_WHEN = re.compile(r"\s*(?:when\b|(?:in\s+)?(?:what|which)\s+(?:year|month|day|date|week)\b|how\s+long\s+ago\b)",
                   re.IGNORECASE)
# A time a message mentions: fixed alternatives, single-word gaps, no nesting (linear time).
_TIME = re.compile(
    r"\b(?:yesterday|tonight|tomorrow|recently|(?:last|this|past|next)\s+(?:night|week(?:end)?|month|year|"
    r"summer|winter|spring|fall|autumn|" + _DAYNAMES + r")|(?:\d+|a|an|one|two|three|four|five|six|few|couple)\s+"
    r"(?:of\s+)?(?:days?|weeks?|months?|years?)\s+ago|" + _DAYNAMES + r"|" + _MONTH + r")\b", re.IGNORECASE)
# A list question (see LIST_DAY_SHARE), matched on the first LIST_CHARS characters: a plural noun
# after "what / which" ("What activities…", "Which kinds of books…"; not "What kind of books…", which
# asks for one kind), "has / have" + one or two words + a participle ("What has Ana painted?",
# "Where has Jo made friends?"), "how many", "what are some / the names", or "both" anywhere.
# Bounded repeats on a bounded prefix: linear time.
LIST_CHARS = 300
_LIST = re.compile(
    r"^\s*(?:(?:what|which)\s+(?:(?:kinds|types|sorts)\s+of\s+)?(?!(?:is|was|does|has|this|kind|type|sort)\b)"
    r"[a-z+/-]{2,}[a-rt-z]s\b|(?:what|where|who|which)\b[^?]{0,60}\b(?:has|have)\s+(?!to\b)(?:\w+\s+){1,2}"
    r"\w+(?:ed|en|ne|de|ght|ld)\b|how\s+many\b|what\s+are\s+(?:some|the\s+names)\b)|\bboth\b", re.IGNORECASE)
_FIRST_PERSON = frozenset("i my me mine myself we our ours us im ive id".split())
_SECOND_PERSON = frozenset("you your yours yourself youre youve".split())


def _vendor() -> str:
    return connection.vendor


def memory_key(memory_id: str) -> str:
    """One FTS token naming the memory, so a search touches only that memory's postings."""
    return "k" + re.sub(r"[^0-9A-Za-z]", "", memory_id).lower()


def query_terms(query: str) -> list[str]:
    """The query's content words (lowercased, de-duplicated, in order)."""
    seen: list[str] = []
    for word in _WORD.findall(query.lower()):
        if len(word) < 2 or word in STOPWORDS or word in seen:
            continue
        seen.append(word)
        if len(seen) >= MAX_QUERY_TERMS:
            break
    return seen


def query_dates(query: str) -> tuple[str, list[tuple[int | None, int, int | None]]]:
    """(the query without its dates, [(year or None, month, day or None)]) for the dates it names."""
    found = []

    def month(name: str) -> int:
        return next(i for i, m in enumerate(_MONTHS, start=1) if m.startswith(name.lower()[:3]))

    for m in _DATES.finditer(query):
        g = m.groups()
        if g[1]:
            found.append((int(g[2]) if g[2] else None, month(g[1]), int(g[0])))
        elif g[3]:
            found.append((int(g[5]) if g[5] else None, month(g[3]), int(g[4])))
        elif g[6]:
            found.append((int(g[7]), month(g[6]), None))
        elif g[8]:
            found.append((int(g[8]), int(g[9]), int(g[10])))
    return (_DATES.sub(" ", query) if found else query), [d for d in found if 1 <= d[1] <= 12]


def _on_date(day: str, dates: list[tuple[int | None, int, int | None]]) -> bool:
    year, month, date = int(day[:4]), int(day[5:7]), int(day[8:10])
    return any((y is None or y == year) and m == month and (d is None or d == date) for y, m, d in dates)


def _entry_text(content: str, parts) -> str:
    return text_of(parts) if parts else content or ""


# --- writing -----------------------------------------------------------------------------------


def index_entries(*, memory_id: str, entry_ids: list[int]) -> int:
    """Bring these entries' index rows in step: committed user/assistant messages are (re)indexed,
    anything else among them is removed. Returns how many rows were indexed."""
    if not entry_ids:
        return 0
    with transaction.atomic():
        # Under the memory's row lock: a memory deleted meanwhile gets no index rows back.
        if not Memory.objects.select_for_update().filter(pk=memory_id).exists():
            return 0
        return _index_locked(memory_id, entry_ids)


def _index_locked(memory_id: str, entry_ids: list[int]) -> int:
    rows = list(
        Entry.objects.filter(memory_id=memory_id, id__in=entry_ids)
        .values_list("id", "seq", "turn", "kind", "role", "committed", "content", "parts", "created_at")
    )
    keep = []
    for entry_id, seq, turn, kind, role, committed, content, parts, created_at in rows:
        text = _entry_text(content, parts).strip()
        if kind == "message" and committed and role in INDEXED_ROLES and text:
            keep.append((entry_id, seq, turn, role, created_at, text))
    unindex_entries(entry_ids=list(entry_ids))
    if not keep:
        return 0
    with connection.cursor() as cursor:
        if _vendor() == "postgresql":
            cursor.executemany(
                f"INSERT INTO {TABLE} (entry_id, memory_id, seq, turn, role, created_at, body) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (entry_id) DO NOTHING",
                [(e, memory_id, s, t, r, c, x) for e, s, t, r, c, x in keep],
            )
        else:
            key = memory_key(memory_id)
            cursor.executemany(
                f"INSERT INTO {TABLE} (rowid, body, mkey, memory_id, seq, turn, role, created_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                [(e, x, key, memory_id, s, t, r, c.isoformat()) for e, s, t, r, c, x in keep],
            )
    return len(keep)


def unindex_entries(*, entry_ids: list[int]) -> int:
    """Remove these entries' index rows (an entry was uncommitted or deleted)."""
    removed = 0
    with connection.cursor() as cursor:
        for i in range(0, len(entry_ids), 500):
            chunk = [int(x) for x in entry_ids[i:i + 500]]
            marks = ",".join(["%s"] * len(chunk))
            column = "entry_id" if _vendor() == "postgresql" else "rowid"
            cursor.execute(f"DELETE FROM {TABLE} WHERE {column} IN ({marks})", chunk)
            removed += max(cursor.rowcount, 0)
    return removed


def forget_memory(*, memory_id: str) -> int:
    """Remove a memory's index rows. Returns how many were removed."""
    with connection.cursor() as cursor:
        if _vendor() == "postgresql":
            cursor.execute(f"DELETE FROM {TABLE} WHERE memory_id = %s", [memory_id])
        else:
            cursor.execute(
                f"DELETE FROM {TABLE} WHERE rowid IN (SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH %s "
                "AND memory_id = %s)",
                [f'mkey:"{memory_key(memory_id)}"', memory_id],
            )
        return max(cursor.rowcount, 0)


def count_rows(*, memory_id: str) -> int:
    """How many index rows a memory has (tests, console)."""
    with connection.cursor() as cursor:
        if _vendor() == "postgresql":
            cursor.execute(f"SELECT count(*) FROM {TABLE} WHERE memory_id = %s", [memory_id])
        else:
            cursor.execute(f"SELECT count(*) FROM {TABLE} WHERE {TABLE} MATCH %s AND memory_id = %s",
                           [f'mkey:"{memory_key(memory_id)}"', memory_id])
        return cursor.fetchone()[0]


# --- reading -----------------------------------------------------------------------------------


def _date(value) -> str:
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).date().isoformat()


def _day(value) -> str:
    """`_date` without parsing for what the index stores on SQLite (UTC ISO text)."""
    if isinstance(value, str) and value.endswith("+00:00") and value[4:5] == "-":
        return value[:10]
    return _date(value)


def _snippet(text: str, terms: list[str], whole_chars: int = SNIPPET_CHARS) -> str:
    """The message itself (spacing collapsed) when at most `whole_chars` long; else a window of
    SNIPPET_CHARS around the part holding the most query terms."""
    text = " ".join(text.split())
    if len(text) <= whole_chars:
        return text
    lower = text.lower()
    at = _densest(lower, terms)
    start = max(0, min(at - SNIPPET_CHARS // 3, len(text) - SNIPPET_CHARS))
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    piece = text[start:start + SNIPPET_CHARS]
    if start + SNIPPET_CHARS < len(text):
        piece = piece.rsplit(" ", 1)[0] + " …"
    return ("… " if start > 0 else "") + piece


def _densest(lower: str, terms: list[str]) -> int:
    """Where the window should center: the occurrence of a query term whose window holds the most
    distinct query terms (the first such; 0 when none occurs). At most SNIPPET_SPOTS occurrences
    are looked at, so the cost is bounded whatever the message's length."""
    spots = []
    for t in terms:
        at = lower.find(t)
        while at >= 0 and len(spots) < SNIPPET_SPOTS:
            spots.append((at, t))
            at = lower.find(t, at + 1)
    if not spots:
        return 0
    spots.sort()
    # One pass with two pointers: the window [at - SNIPPET_CHARS // 3, that + SNIPPET_CHARS) of each spot.
    best, where, lo, hi = 0, spots[0][0], 0, 0
    inside: dict[str, int] = {}
    for at, _ in spots:
        start = at - SNIPPET_CHARS // 3
        while hi < len(spots) and spots[hi][0] + len(spots[hi][1]) <= start + SNIPPET_CHARS:
            inside[spots[hi][1]] = inside.get(spots[hi][1], 0) + 1
            hi += 1
        while lo < hi and spots[lo][0] < start:
            inside[spots[lo][1]] -= 1
            if not inside[spots[lo][1]]:
                del inside[spots[lo][1]]
            lo += 1
        if len(inside) > best:
            best, where = len(inside), at
    return where


def _before_entry_id(memory_id: str, before_seq: int | None) -> int | None:
    """Entry ids grow with seq inside a memory, so "older than seq S" is "rowid below S's id"."""
    if before_seq is None:
        return None
    # Plain SQL: this runs on every decorate, and compiling the ORM query cost more than the read.
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {Entry._meta.db_table} WHERE memory_id = %s AND seq >= %s ORDER BY seq LIMIT 1",
                       [memory_id, before_seq])
        row = cursor.fetchone()
    return row[0] if row else None


def _candidates(cursor, memory_id: str, terms: list[str], before_seq: int | None,
                before_id: int | None) -> list[tuple]:
    """The newest (at most PER_TERM_CAP) index rows of this memory containing every one of `terms`."""
    if _vendor() == "postgresql":
        sql = (f"SELECT entry_id, seq, turn, role, created_at, body FROM {TABLE} "
               f"WHERE memory_id = %s AND tsv @@ plainto_tsquery('english', %s)")
        params: list = [memory_id, " ".join(terms)]
        if before_seq is not None:
            sql += " AND seq < %s"
            params.append(before_seq)
    else:
        sql = (f"SELECT rowid, seq, turn, role, created_at, body FROM {TABLE} WHERE {TABLE} MATCH %s "
               "AND memory_id = %s")
        match = " AND ".join(f'body:"{t}"' for t in terms)
        params = [f'mkey:"{memory_key(memory_id)}" AND {match}', memory_id]
        if before_id is not None:
            sql += " AND rowid < %s"
            params.append(before_id)
    sql += f" ORDER BY {'seq' if _vendor() == 'postgresql' else 'rowid'} DESC LIMIT %s"
    params.append(PER_TERM_CAP)
    cursor.execute(sql, params)
    return cursor.fetchall()


def _neighbours(memory_id: str, seqs: list[int], before_seq: int | None, reach: int = 1) -> dict[int, tuple]:
    """The committed user/assistant messages up to `reach` before and after these seqs (and older
    than `before_seq`): {seq: (entry_id, seq, turn, role, created_at, text)}. At most
    2·reach·len(seqs) rows."""
    steps = [d for r in range(1, reach + 1) for d in (-r, r)]
    wanted = sorted({s + d for s in seqs for d in steps if s + d > 0 and (before_seq is None or s + d < before_seq)})
    return _rows_by_seq(memory_id, wanted)


def _lacking(parts: dict | None, mine: dict) -> float:
    """The neighbour's score from the terms this message lacks."""
    if not parts:
        return 0.0
    return sum(v for t, v in parts.items() if t not in mine)


def _speaker(text: str) -> str:
    """The speaker label of a "Name: text" message (lowercased), or "" (no regex: linear)."""
    head, sep, _ = text[:42].partition(":")
    words = head.split()
    if not sep or not 1 <= len(words) <= 3 or not all(w.replace("-", "").replace("'", "").isalpha() for w in words):
        return ""
    return " ".join(words).lower()


def _speakers_named(rows, terms: list[str]) -> set[str]:
    """Speaker labels among these rows that the query names (a one-word label equal to a term)."""
    wanted = set(terms)
    return {name for name in {_speaker(r[5]) for r in rows} if name and set(name.split()) <= wanted}


def _hit(row: tuple, terms: list[str], score: float, whole_chars: int = 0) -> dict:
    e, seq, turn, role, created_at, body = row
    return {"entry_id": e, "seq": seq, "turn": turn, "date": _date(created_at), "role": role,
            "snippet": _snippet(body, terms, max(whole_chars, SNIPPET_CHARS)), "score": round(score, 4)}


def search(*, memory_id: str, query: str, limit: int = 5, before_seq: int | None = None,
           neighbours: bool = False, query_vector: tuple[str, list[float]] | None = None,
           whole_chars: int = 0) -> list[dict]:
    """Ranked snippets, best first: [{"entry_id", "seq", "turn", "date", "role", "snippet", "score"}].

    `before_seq`: only entries strictly older than this sequence number (decorate passes the
    first message of its window, so recall never repeats what the model already sees).
    A higher score is a better match. `neighbours`: each hit also carries "context", the
    messages right before and after it (older than `before_seq`), for evidence that spans turns.
    `query_vector`: (model key, unit vector) of the query (memories.embeddings.embed_query); the
    FUSE_DEPTH nearest stored messages of that model (`embeddings.closeness`: the whole message's
    vector and its sentences') join the candidates and add their closeness (on the lexical scale)
    to the score, so a paraphrase with no word in common can still be
    found: weighted DENSE_WEIGHT when some message matches the query's words whole, rising to
    DENSE_WEIGHT_WEAK as they match less of it (`lexical_coverage`, one pass over the candidates),
    and at least DENSE_WEIGHT_UNSAID when most of the query is in words no message has and the
    nearest vector stands out from the scanned ones (`dense_weight`: a paraphrase); a stored
    question's closeness counts DENSE_QUESTION of itself (the answer is a statement); when the
    query names a speaker, each scanned cosine also takes DENSE_PREV_SHARE of the previous
    message's (a reply scores some of what it answers; no read).
    `whole_chars`: a message up to this many characters is its snippet whole (decorate's block shows
    messages whole); a longer one, and every one by default, is cut to SNIPPET_CHARS around the match.

    Cost is bounded by the index, whatever the memory's size (with vectors: plus at most
    embeddings.STATS_SAMPLE + 2·embeddings.CODE_CANDIDATES vector rows read whole, each at most
    1 + embeddings.PIECE_MAX vectors, one pass over the memory's codes held in the process (the
    bound in memories/embeddings.py), and FUSE_DEPTH rows by (memory, seq)): at most MAX_QUERY_TERMS single-term reads and
    MAX_PAIR_READS conjunctive reads, each returning at most PER_TERM_CAP rows, then at most
    4·SPREAD_FROM neighbour rows by (memory, seq) (two each side), plus 2·limit for `neighbours`.
    A term rarer than the cap is read whole, so its old matches are all candidates; a common
    term (one that fills its cap) is also read in conjunction with every other common term, so an
    old message matching several of them is still found although each term alone would only
    return its newest matches. Candidates are scored with BM25 (document frequencies from the same bounded answers; a term that fills its
    cap counts as common and weighs little). A message also scores PREV_SHARE / NEXT_SHARE of
    the terms it lacks that the message before / after it matches, PREV2_SHARE / NEXT2_SHARE of
    those that the message two before / after matches and neither it nor the one between does
    (the same speaker's next message, after the other's question), SPEAKER_BOOST more when it
    is written "Name: text" by a speaker the query names, DATE_BOOST more when written on a date
    the query names, and DAY_SHARE of its day's DAY_TOP best scores (a session about the topic).
    Among the SPREAD_FROM best, a newer message matching the same terms as an older one and
    sharing most of its words scores at least as much (a correction beats what it corrects; no
    read). Of messages saying the same text, only the best-scoring one is a hit (DISTINCT_TEXT).
    Then, among the RERANK_FROM best only: a named speaker's message whose matching words sit next
    to "you / your" (not "I / my") weighs OTHER_DROP less, and for a "when" question a message that
    mentions a time weighs WHEN_BOOST more. A list question ("What activities…", "… both …") takes
    its LIST_HEAD first hits from the same candidates ranked with LIST_DAY_SHARE as the day prior
    (spread over sessions), the rest in the usual order: one more pass over them, no read. Nothing
    reads or ranks the rest of the memory.
    """
    words, dates = query_dates(query)
    terms = query_terms(words)
    if (not terms and not query_vector) or limit < 1:
        return []
    before_id = None
    if _vendor() != "postgresql" and before_seq is not None:
        before_id = _before_entry_id(memory_id, before_seq)
        if before_id is None:
            before_seq = None  # nothing at or after it: everything is older
    rows: dict[int, tuple] = {}
    hits: dict[int, set[str]] = {}
    df: dict[str, int] = {}
    with connection.cursor() as cursor:
        for term in terms:
            found = _candidates(cursor, memory_id, [term], before_seq, before_id)
            df[term] = len(found)
            for row in found:
                rows[row[0]] = row
                hits.setdefault(row[0], set()).add(term)
        common = [t for t in terms if df[t] >= PER_TERM_CAP]
        pairs = [(a, b) for i, a in enumerate(common) for b in common[i + 1:]][:MAX_PAIR_READS]
        for pair in pairs:
            for row in _candidates(cursor, memory_id, list(pair), before_seq, before_id):
                rows[row[0]] = row
                hits.setdefault(row[0], set()).update(pair)
    if not rows and not query_vector:
        return []
    count = Memory.objects.filter(pk=memory_id).values_list("message_count", flat=True).first() or 0
    total = max(count, len(rows))
    scored = _bm25(rows, hits, df, total) if rows else []
    scored.sort(key=lambda s: (-s[0], -s[1]))
    own = {rows[e][1]: parts for _, _, e, parts in scored}
    pool = {rows[e][1]: rows[e] for _, _, e, _ in scored}
    # Evidence often sits next to the words that match ("who played at the concert?" is answered
    # by the reply to "what concert was it?"): a message also scores a share of the message
    # before it and of the one after it (bounded: the neighbours of the best SPREAD_FROM only).
    # Two away too: the same speaker's next message, after the other one asked about it.
    top = scored[:SPREAD_FROM]
    reach = 2 if (PREV2_SHARE or NEXT2_SHARE) else 1
    near = _neighbours(memory_id, [rows[e][1] for _, _, e, _ in top], before_seq, reach) if (PREV_SHARE or NEXT_SHARE) else {}
    for seq, row in near.items():
        # A neighbour matching no term is a hit of its own only when it says something ("ok" does not).
        if seq not in pool and len(row[5].split()) >= NEIGHBOUR_MIN_WORDS:
            pool[seq] = row
    # Speakers named by the query, among the best candidates' speakers (bounded: SPREAD_FROM rows).
    names = _speakers_named([rows[e] for _, _, e, _ in top], terms)
    # With vectors, the nearest stored messages join the candidates (a paraphrase shares no word).
    closeness, standout = (_closeness(memory_id, query_vector, before_seq, named=bool(names))
                           if query_vector else ({}, 0.0))
    if closeness:
        pool.update(_rows_by_seq(memory_id, [seq for seq in closeness if seq not in pool]))
        if DENSE_QUESTION != 1.0:
            closeness = {seq: c * DENSE_QUESTION if seq in pool and _is_question(pool[seq][5]) else c
                         for seq, c in closeness.items()}
    lexical: dict[int, float] = {}
    for seq in pool:
        mine = own.get(seq, {})
        if names and NAMED_SPEAKER_TERM != 1.0:
            mine = {t: v * NAMED_SPEAKER_TERM if t in names else v for t, v in mine.items()}
        # From a neighbour, only the terms this message lacks: a reply that repeats the message's
        # words adds nothing, a question whose answer this message is adds its words.
        lexical[seq] = (sum(mine.values()) + PREV_SHARE * _lacking(own.get(seq - 1), mine)
                        + NEXT_SHARE * _lacking(own.get(seq + 1), mine)
                        + PREV2_SHARE * _lacking(own.get(seq - 2), {**own.get(seq - 1, {}), **mine})
                        + NEXT2_SHARE * _lacking(own.get(seq + 2), {**own.get(seq + 1, {}), **mine}))
    if SUPERSEDE_SHARED:
        lexical = _newer_first(lexical, own, pool)
    # Meaning adds to the words on the lexical scale (a share of the best lexical score that grows
    # as the words match less of the query), so the speaker, date and day weights below apply to
    # both alike.
    scale = max(lexical.values(), default=0.0) or 1.0
    weight = 0.0
    if closeness:
        weight = dense_weight(lexical_coverage(terms, hits, df, total), unsaid_share(terms, df, total), standout,
                              named=bool(names))
    final: list[tuple[float, int, str, tuple]] = []
    for seq, row in pool.items():
        score = lexical[seq] + weight * scale * closeness[seq] if seq in closeness else lexical[seq]
        if names and _speaker(row[5]) in names:
            score *= 1 + SPEAKER_BOOST
        day = _day(row[4])
        if dates and _on_date(day, dates):
            score *= 1 + DATE_BOOST
        final.append((score, seq, day, row))
    when = bool(_WHEN.match(query))
    head: list[tuple[float, int, str, tuple]] = []
    if LIST_HEAD and _LIST.search(query[:LIST_CHARS]):
        # A list question: its first hits spread over the days (see LIST_DAY_SHARE).
        spread = _day_prior(final, LIST_DAY_SHARE)
        head = _rerank(_distinct(spread) if DISTINCT_TEXT else spread, own, names, when, LIST_HEAD)[:LIST_HEAD]
    if DAY_SHARE:
        final = _day_prior(final, DAY_SHARE)
    if DISTINCT_TEXT:
        final = _distinct(final)
    ranked = _rerank(final, own, names, when, limit)
    if head:
        taken = {_text_key(r[3][5]) for r in head}
        ranked = head + [r for r in ranked if _text_key(r[3][5]) not in taken]
    ranked = ranked[:limit]
    out = [_hit(row, terms, score, whole_chars) for score, _, _, row in ranked]
    if neighbours and out:
        around = {**near, **{r[1]: r for r in rows.values()}}
        missing = [h["seq"] for h in out if h["seq"] - 1 not in around or h["seq"] + 1 not in around]
        around.update(_neighbours(memory_id, missing, before_seq))
        for hit in out:
            hit["context"] = [_hit(around[s], terms, 0.0, whole_chars) for s in (hit["seq"] - 1, hit["seq"] + 1) if s in around]
    return out


def _about_the_other(text: str, terms) -> bool:
    """Whether a message's words matching these query terms (a word starting with a term's first
    five letters, or the reverse, so "painting" meets "painted") all sit within SELF_REACH words of
    "you / your" and none within reach of "I / my / we". Linear in the message."""
    keys = [t[:5] for t in terms]
    if not keys:
        return False
    words = [w.replace("'", "").replace("\u2019", "") for w in _WORD_APOS.findall(text.partition(":")[2].lower())]
    second = False
    for i, w in enumerate(words):
        if any(w.startswith(k) or (len(w) >= 4 and k.startswith(w[:5])) for k in keys):
            near = words[max(0, i - SELF_REACH):i + SELF_REACH + 1]
            if any(x in _FIRST_PERSON for x in near):
                return False
            second = second or any(x in _SECOND_PERSON for x in near)
    return second


def _rerank(final: list[tuple[float, int, str, tuple]], own: dict[int, dict], names: set[str],
            when: bool, limit: int) -> list[tuple[float, int, str, tuple]]:
    """The RERANK_FROM (or `limit`, when more) best of [(score, seq, day, row)], best first, with
    the talk-about-the-other and when-question weights applied (linear in those messages)."""
    best = heapq.nlargest(max(RERANK_FROM, limit), final, key=lambda f: (f[0], f[1]))
    if not (names and OTHER_DROP) and not (when and WHEN_BOOST):
        return best
    out = []
    for score, seq, day, row in best:
        if names and OTHER_DROP and _speaker(row[5]) in names and _about_the_other(row[5], own.get(seq, ())):
            score *= 1 - OTHER_DROP
        if when and WHEN_BOOST and _TIME.search(row[5]):
            score *= 1 + WHEN_BOOST
        out.append((score, seq, day, row))
    out.sort(key=lambda f: (-f[0], -f[1]))
    return out


def lexical_coverage(terms: list[str], hits: dict[int, set[str]], df: dict[str, int], total: int) -> float:
    """0..1: how much of the query the best-matching candidate says, as the largest share of the
    query terms' IDF mass (plain BM25 IDF; a term no message has weighs most) that one candidate
    matches. 0 when nothing matches. Linear in the candidates."""
    idf = {t: _idf(df.get(t, 0), total) for t in terms}
    mass = sum(idf.values())
    if mass <= 0:
        return 0.0
    return max((sum(idf.get(t, 0.0) for t in matched) for matched in hits.values()), default=0.0) / mass


def unsaid_share(terms: list[str], df: dict[str, int], total: int) -> float:
    """0..1: the share of the query terms' IDF mass in terms no candidate has (df 0: no message
    older than the window says that word). A paraphrase asks in words the memory never used
    ("Where did I leave the vehicle?" for "I parked the car on level 3")."""
    idf = {t: _idf(df.get(t, 0), total) for t in terms}
    mass = sum(idf.values())
    return sum(v for t, v in idf.items() if not df.get(t, 0)) / mass if mass > 0 else 0.0


def dense_weight(coverage: float, unsaid: float, standout: float, named: bool = False) -> float:
    """The share of the best lexical score the nearest vector adds: DENSE_WEIGHT when some message
    says the query's words whole, rising to DENSE_WEIGHT_WEAK as the words match less of it; at
    least DENSE_WEIGHT_UNSAID when UNSAID_SHARE of the query is in words no message has and the
    nearest vector stands out from the rest (its cosine DENSE_STANDOUT standard deviations above
    the mean of the scanned ones): the words cannot find the answer there, and meaning can. Not
    when the query names a speaker (`named`): the name is a word match that tells whose messages
    hold the answer ("Which cities has Jon visited?"), and the words it lacks are the ones a
    multi-hop answer spreads over several messages."""
    weight = DENSE_WEIGHT + (DENSE_WEIGHT_WEAK - DENSE_WEIGHT) * (1 - coverage) ** WEAK_POWER
    if unsaid >= UNSAID_SHARE and standout >= DENSE_STANDOUT and not named:
        weight = max(weight, DENSE_WEIGHT_UNSAID)
    return weight


def _closeness(memory_id: str, query_vector: tuple[str, list[float]],
               before_seq: int | None, named: bool = False) -> tuple[dict[int, float], float]:
    """({seq: 0..1} for the FUSE_DEPTH nearest stored messages, standout). Closeness is the
    message's `embeddings.closeness` (its cosine, or its best sentence's in part) rescaled so the
    nearest is 1 and the FUSE_DEPTH-th is 0 (cosines of different queries are not comparable); standout is the nearest's cosine in standard deviations above the mean of
    all scanned vectors (0 when they are all alike). `named` (the query names a speaker): each
    cosine plus DENSE_PREV_SHARE of the previous message's."""
    model, vector = query_vector
    found = embeddings.neighbourhood(memory_id=memory_id, model=model, query=vector, limit=FUSE_DEPTH,
                                     before_seq=before_seq, prev_share=DENSE_PREV_SHARE if named else 0.0)
    dense = found.hits
    if not dense:
        return {}, 0.0
    hi, lo = dense[0][0], dense[-1][0]
    span = (hi - lo) or 1.0
    standout = (hi - found.mean) / found.std if found.std > 0 else 0.0
    return {seq: max(0.0, (cos - lo) / span) for cos, seq, _ in dense}, standout


def _is_question(text: str) -> bool:
    """A message that ends with a question mark (no regex: linear)."""
    return text.rstrip().endswith("?")


def _distinct(final: list[tuple[float, int, str, tuple]]) -> list[tuple[float, int, str, tuple]]:
    """[(score, seq, day, row)] keeping, of messages with the same text (case and spacing aside),
    the best-scoring one (the newest on a tie). Linear in the candidates."""
    best: dict[str, tuple[float, int, str, tuple]] = {}
    for item in final:
        key = _text_key(item[3][5])
        have = best.get(key)
        if have is None or (item[0], item[1]) > (have[0], have[1]):
            best[key] = item
    return list(best.values())


def _text_key(text: str) -> str:
    """A message's text with case and spacing aside (what DISTINCT_TEXT compares)."""
    return " ".join(text.lower().split())


def _day_prior(final: list[tuple[float, int, str, tuple]], share: float) -> list[tuple[float, int, str, tuple]]:
    """[(score, seq, day, row)] with each message also scoring `share` (DAY_SHARE) of how well its day
    matches the query (the sum of that day's DAY_TOP best scores): a day is a session, and a
    session about the topic holds the answer more often than one stray match elsewhere. Linear
    in the candidates."""
    by_day: dict[str, list[float]] = {}
    for score, _, day, _ in final:
        by_day.setdefault(day, []).append(score)
    day_score = {d: sum(heapq.nlargest(DAY_TOP, v)) if len(v) > DAY_TOP else sum(v) for d, v in by_day.items()}
    return [(score + share * day_score[day], seq, day, row) for score, seq, day, row in final]


def _words(text: str) -> set[str]:
    """A message's content words (lowercased, no stopwords, no "Name:" speaker label)."""
    label = _speaker(text)
    if label:
        text = text.partition(":")[2]
    return {w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in STOPWORDS}


def _newer_first(lexical: dict[int, float], own: dict[int, dict], pool: dict[int, tuple]) -> dict[int, float]:
    """{seq: lexical score} where, among the SPREAD_FROM best, a message matching the same
    query terms as an older one and sharing at least SUPERSEDE_SHARED content words with it
    (and SUPERSEDE_OVERLAP of the shorter one's) scores at least as much as that older one (it
    says something newer about the same thing). Before the speaker, date and day weights, so a
    date the query names still picks its day. Quadratic in SPREAD_FROM only (at most 435 pairs
    of small sets)."""
    best = sorted(heapq.nlargest(SPREAD_FROM, lexical, key=lambda seq: (lexical[seq], seq)))  # oldest first
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
            words = _words(pool[seq][5])
            for older, other in seen:
                shared = len(words & other)
                if (shared >= SUPERSEDE_SHARED and lifted[older] >= lifted[seq]
                        and shared >= SUPERSEDE_OVERLAP * min(len(words), len(other))):
                    lifted[seq] = lifted[older] * (1 + 1e-6)
            seen.append((seq, words))
    return lifted


def _rows_by_seq(memory_id: str, seqs: list[int]) -> dict[int, tuple]:
    """{seq: (entry_id, seq, turn, role, created_at, text)} of committed user/assistant messages."""
    if not seqs:
        return {}
    marks = ",".join(["%s"] * len(seqs))
    with connection.cursor() as cursor:
        # Only (memory, seq) in SQL, so the planner takes the unique (memory, seq) index; with
        # `kind = …` it may pick (memory, kind, turn) and scan every message of the memory.
        cursor.execute(f"SELECT id, seq, turn, role, created_at, content, parts, kind, committed "
                       f"FROM {Entry._meta.db_table} WHERE memory_id = %s AND seq IN ({marks})",
                       [memory_id, *sorted(seqs)])
        found = cursor.fetchall()
    out = {}
    for entry_id, seq, turn, role, created_at, content, parts, kind, committed in found:
        if kind != "message" or not committed or role not in INDEXED_ROLES:
            continue
        text = _entry_text(content, json.loads(parts) if isinstance(parts, str) else parts).strip()
        if text:
            out[seq] = (entry_id, seq, turn, role, created_at, text)
    return out


def _idf(df: int, total: int) -> float:
    """BM25's IDF of a term found in `df` of `total` messages."""
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def _bm25(rows: dict[int, tuple], hits: dict[int, set[str]], df: dict[str, int], total: int) -> list[tuple]:
    """[(score, seq, entry_id, {term: its part of the score})] for the candidates: BM25 with the
    bounded document frequencies."""
    lengths = {k: max(1, len(r[5].split())) for k, r in rows.items()}
    average = sum(lengths.values()) / len(lengths)
    k1, b = BM25_K1, BM25_B
    scored = []
    for entry_id, matched in hits.items():
        parts = {}
        for term in matched:
            common = df[term] >= PER_TERM_CAP
            idf = _idf(df[term], total) * (COMMON_WEIGHT if common else 1.0)
            parts[term] = idf * (k1 + 1) / (1 + k1 * (1 - b + b * lengths[entry_id] / average))
        scored.append((sum(parts.values()), rows[entry_id][1], entry_id, parts))
    return scored

