"""The reads a search makes: the index rows matching the query's terms, and messages by
(memory, seq). Each read is bounded (`Ranking.per_term_cap` rows, or the seqs asked for), so a
search never reads the whole memory."""

from __future__ import annotations

import json
from typing import NamedTuple

from django.db import connection

from memories.models import Entry, Memory
from memories.recall.filters import NO_FILTERS, Filters
from memories.recall.hits import Message, new
from memories.recall.index import INDEXED_ROLES, TABLE, entry_text, is_postgresql, memory_key, thread_key
from memories.recall.ranking import Ranking


class Candidates(NamedTuple):
    """The index's answers for a query's terms."""

    rows: dict[int, Message]  # entry_id: message
    hits: dict[int, set[str]]  # entry_id: the query terms it matched
    df: dict[str, int]  # term: how many rows its read returned (at most per_term_cap)


def before_entry_id(memory_id: str, before_seq: int | None) -> int | None:
    """Entry ids grow with seq inside a memory, so "older than seq S" is "rowid below S's id"."""
    if before_seq is None:
        return None
    # Plain SQL: this runs on every decorate, and compiling the ORM query costs more than the read.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM {Entry._meta.db_table} WHERE memory_id = %s AND seq >= %s ORDER BY seq LIMIT 1",
            [memory_id, before_seq],
        )
        row = cursor.fetchone()
    return row[0] if row else None


def candidates(
    *,
    memory_id: str,
    terms: list[str],
    before_seq: int | None,
    before_id: int | None,
    ranking: Ranking,
    thread: str | None = None,
    filters: Filters = NO_FILTERS,
) -> Candidates:
    """One read per term, then one per pair of common terms (those that fill their cap), so an old
    message matching several common terms is found although each alone returns only its newest
    matches: at most len(terms) + max_pair_reads reads of at most per_term_cap rows. `thread`:
    only that thread's rows (None: every thread's); `filters`: only the rows they admit (both are
    conditions of each read, so the cap counts admitted rows)."""
    rows: dict[int, Message] = {}
    hits: dict[int, set[str]] = {}
    df: dict[str, int] = {}
    with connection.cursor() as cursor:
        for term in terms:
            found = _matching(
                cursor, memory_id, [term], before_seq, before_id, ranking.per_term_cap, thread, filters
            )
            df[term] = len(found)
            for row in found:
                rows[row[0]] = new(Message, row)
                hits.setdefault(row[0], set()).add(term)
        common = [t for t in terms if df[t] >= ranking.per_term_cap]
        pairs = [(a, b) for i, a in enumerate(common) for b in common[i + 1 :]][: ranking.max_pair_reads]
        for pair in pairs:
            for row in _matching(
                cursor, memory_id, list(pair), before_seq, before_id, ranking.per_term_cap, thread, filters
            ):
                rows[row[0]] = new(Message, row)
                hits.setdefault(row[0], set()).update(pair)
    return Candidates(rows, hits, df)


def _matching(
    cursor,
    memory_id: str,
    terms: list[str],
    before_seq: int | None,
    before_id: int | None,
    cap: int,
    thread: str | None = None,
    filters: Filters = NO_FILTERS,
) -> list[tuple]:
    """The newest (at most `cap`) index rows of this memory (of `thread` when given, admitted by
    `filters`) containing every one of `terms`."""
    narrow, narrow_params = filters.index_where(is_postgresql())
    if is_postgresql():
        sql = (
            f"SELECT entry_id, seq, turn, role, created_at, body, thread FROM {TABLE} "
            f"WHERE memory_id = %s AND tsv @@ plainto_tsquery('english', %s)"
        )
        params: list = [memory_id, " ".join(terms)]
        if thread is not None:
            sql += " AND thread = %s"
            params.append(thread)
        if before_seq is not None:
            sql += " AND seq < %s"
            params.append(before_seq)
        sql += narrow + " ORDER BY seq DESC LIMIT %s"
        params += narrow_params
    else:
        sql = (
            f"SELECT rowid, seq, turn, role, created_at, body, thread FROM {TABLE} WHERE {TABLE} MATCH %s "
            "AND memory_id = %s"
        )
        match = " AND ".join(f'body:"{t}"' for t in terms)
        keys = f'mkey:"{memory_key(memory_id)}"'
        if thread is not None:
            # The thread's token narrows the postings read; the column is the exact test.
            keys += f' AND mkey:"{thread_key(thread)}"'
            sql += " AND thread = %s"
        params = [f"{keys} AND {match}", memory_id, *([] if thread is None else [thread])]
        if before_id is not None:
            sql += " AND rowid < %s"
            params.append(before_id)
        sql += narrow + " ORDER BY rowid DESC LIMIT %s"
        params += narrow_params
    params.append(cap)
    cursor.execute(sql, params)
    return cursor.fetchall()


def message_count(memory_id: str) -> int:
    return Memory.objects.filter(pk=memory_id).values_list("message_count", flat=True).first() or 0


def neighbours(
    memory_id: str,
    seqs: list[int],
    before_seq: int | None,
    reach: int = 1,
    thread: str | None = None,
    filters: Filters = NO_FILTERS,
) -> dict[int, Message]:
    """The committed user/assistant messages up to `reach` before and after these seqs (and older
    than `before_seq`; of `thread` when given, admitted by `filters`): {seq: message}. At most
    2·reach·len(seqs) rows."""
    steps = [d for r in range(1, reach + 1) for d in (-r, r)]
    wanted = sorted(
        {s + d for s in seqs for d in steps if s + d > 0 and (before_seq is None or s + d < before_seq)}
    )
    return messages_by_seq(memory_id, wanted, thread, filters)


def messages_by_seq(
    memory_id: str, seqs: list[int], thread: str | None = None, filters: Filters = NO_FILTERS
) -> dict[int, Message]:
    """{seq: message} of the committed user/assistant messages at these seqs (of `thread` when
    given, admitted by `filters`)."""
    if not seqs:
        return {}
    marks = ",".join(["%s"] * len(seqs))
    # role and created_at have no index of their own: the (memory, seq) index still serves this.
    narrow, narrow_params = filters.entries_where()
    with connection.cursor() as cursor:
        # Only (memory, seq) in SQL, so the planner takes the unique (memory, seq) index; with
        # `kind = …` it may pick (memory, kind, turn) and scan every message of the memory.
        cursor.execute(
            f"SELECT id, seq, turn, role, created_at, content, parts, kind, committed, thread "
            f"FROM {Entry._meta.db_table} WHERE memory_id = %s AND seq IN ({marks}){narrow}",
            [memory_id, *sorted(seqs), *narrow_params],
        )
        found = cursor.fetchall()
    out = {}
    for entry_id, seq, turn, role, created_at, content, parts, kind, committed, said_in in found:
        if kind != "message" or not committed or role not in INDEXED_ROLES:
            continue
        if thread is not None and said_in != thread:
            continue
        text = entry_text(content, json.loads(parts) if isinstance(parts, str) else parts).strip()
        if text:
            out[seq] = new(Message, (entry_id, seq, turn, role, created_at, text, said_in))
    return out
