"""Recall: full-text search over committed messages, behind one interface.

SQLite FTS5 on the embedded default, PostgreSQL full-text (tsvector + GIN) in production; both
tables are created by migration `0002_recall_index`. Decorate asks the index for the top few
matches outside the window; nothing here ranks the whole memory in Python, and nothing here
calls a model.

Interface: `index_entries`, `unindex_entries`, `search`, `forget_memory`. Index rows are keyed
by the entry id, so indexing is idempotent (a re-run replaces the same rows).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

from django.db import connection, transaction

from common.messages import text_of
from memories.models import Entry, Memory

TABLE = "memories_recall"
INDEXED_ROLES = ("user", "assistant")
SNIPPET_CHARS = 240
MAX_QUERY_TERMS = 12
PER_TERM_CAP = 200  # index rows per query term: bounds recall's cost whatever the memory's size

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


def _snippet(text: str, terms: list[str]) -> str:
    """The message itself when short; else a window of it around the first matching term."""
    text = " ".join(text.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    lower = text.lower()
    hits = [lower.find(t) for t in terms if lower.find(t) >= 0]
    at = min(hits) if hits else 0
    start = max(0, min(at - SNIPPET_CHARS // 3, len(text) - SNIPPET_CHARS))
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    piece = text[start:start + SNIPPET_CHARS]
    if start + SNIPPET_CHARS < len(text):
        piece = piece.rsplit(" ", 1)[0] + " …"
    return ("… " if start > 0 else "") + piece


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


def _candidates(cursor, memory_id: str, term: str, before_seq: int | None, before_id: int | None) -> list[tuple]:
    """The newest (at most PER_TERM_CAP) index rows of this memory containing `term`."""
    if _vendor() == "postgresql":
        sql = (f"SELECT entry_id, seq, turn, role, created_at, body FROM {TABLE} "
               f"WHERE memory_id = %s AND tsv @@ plainto_tsquery('english', %s)")
        params: list = [memory_id, term]
        if before_seq is not None:
            sql += " AND seq < %s"
            params.append(before_seq)
    else:
        sql = (f"SELECT rowid, seq, turn, role, created_at, body FROM {TABLE} WHERE {TABLE} MATCH %s "
               "AND memory_id = %s")
        params = [f'mkey:"{memory_key(memory_id)}" AND body:"{term}"', memory_id]
        if before_id is not None:
            sql += " AND rowid < %s"
            params.append(before_id)
    sql += f" ORDER BY {'seq' if _vendor() == 'postgresql' else 'rowid'} DESC LIMIT %s"
    params.append(PER_TERM_CAP)
    cursor.execute(sql, params)
    return cursor.fetchall()


def search(*, memory_id: str, query: str, limit: int = 5, before_seq: int | None = None) -> list[dict]:
    """Ranked snippets, best first: [{"entry_id", "seq", "turn", "date", "role", "snippet", "score"}].

    `before_seq`: only entries strictly older than this sequence number (decorate passes the
    first message of its window, so recall never repeats what the model already sees).
    A higher score is a better match.

    Cost is bounded by the index, whatever the memory's size: for each query term the index
    returns at most PER_TERM_CAP newest matching rows; those candidates are scored with BM25
    (document frequencies counted from the same bounded answers, so a term that fills its cap
    counts as common and weighs little). Nothing reads or ranks the rest of the memory.
    """
    terms = query_terms(query)
    if not terms or limit < 1:
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
            found = _candidates(cursor, memory_id, term, before_seq, before_id)
            df[term] = len(found)
            for row in found:
                rows[row[0]] = row
                hits.setdefault(row[0], set()).add(term)
    if not rows:
        return []
    count = Memory.objects.filter(pk=memory_id).values_list("message_count", flat=True).first() or 0
    total = max(count, len(rows))
    lengths = {k: max(1, len(r[5].split())) for k, r in rows.items()}
    average = sum(lengths.values()) / len(lengths)
    k1, b = 1.2, 0.75
    scored = []
    for entry_id, matched in hits.items():
        score = 0.0
        for term in matched:
            common = df[term] >= PER_TERM_CAP
            idf = math.log(1 + (total - df[term] + 0.5) / (df[term] + 0.5)) * (0.25 if common else 1.0)
            score += idf * (k1 + 1) / (1 + k1 * (1 - b + b * lengths[entry_id] / average))
        scored.append((score, rows[entry_id][1], entry_id))
    scored.sort(key=lambda s: (-s[0], -s[1]))
    out = []
    for score, _, entry_id in scored[:limit]:
        e, seq, turn, role, created_at, body = rows[entry_id]
        out.append({"entry_id": e, "seq": seq, "turn": turn, "date": _date(created_at), "role": role,
                    "snippet": _snippet(body, terms), "score": round(score, 4)})
    return out
