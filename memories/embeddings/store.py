"""The vectors' store (`VectorStore`, the one code that reads or writes them) and each process's
copy of a memory's codes, which a dense search scans.

Vectors live in the database (`RecallVector`: float32 bytes, a blob on SQLite and bytea on
PostgreSQL, with the model name and dimension), so a model change never mixes spaces: vectors
of another model are ignored at once and replaced in the background (`memories.embeddings.indexing`).
`VectorStore` is the one interface to them, so a pgvector column and index can take over later.
A message's closeness to a query is (1 − PIECE_SHARE)·cosine(whole) + PIECE_SHARE·max(cosine of
whole and pieces): one sentence of a long turn can answer a question the whole turn's vector dilutes.

Each row also holds its vectors' sign bits (`codes`: dim/8 bytes a vector, 48 at 384-d). A search
(`memories.embeddings.search`) takes the float vectors of the newest STATS_SAMPLE rows, scans the
codes of every older row (XOR and popcount, one flat column of 64-bit words at a time: the rows
whose closest vector differs from the query in the fewest bits) and takes the float vectors of the
CODE_CANDIDATES best of them, rescored exactly. Both are held in the process between searches
(`Codes`, `codes_for`): the codes of every row (rows stored since the last search are read by seq,
the whole copy again after CODE_CACHE_SECONDS; at most CODE_CACHE_VECTORS codes a process, least
recently used memories first out), and the float rows searches read lately, end to end in one
matrix a search gathers from (at most FLOAT_CACHE_ROWS a memory and FLOAT_CACHE_BYTES a process;
only those not held are read, by seq). A row replaced or removed in this process leaves the held
floats at once; one replaced by another process (a re-embedded edit) is read again with the codes,
within CODE_CACHE_SECONDS.
"""

from __future__ import annotations

import array
import threading
import time
from collections import OrderedDict

from django.db import connection

from memories.embeddings.provider import PIECE_MAX
from memories.models import Entry, RecallVector

# A dense search reads the float vectors of at most STATS_SAMPLE newest rows plus CODE_CANDIDATES
# older ones (and, with prev_share, the row before each of those), whatever the memory's size; the
# older ones are chosen among every row of the memory by their codes (sign bits, dim/8 bytes a vector).
STATS_SAMPLE = 500  # newest rows read whole: exact closeness, and the spread the standout is measured against
CODE_CANDIDATES = 300  # older rows, the best by their codes, whose float vectors are then read and rescored
CODE_CACHE_SECONDS = 120.0  # a process's copy of a memory's codes is read again whole after this long
CODE_CACHE_VECTORS = (
    1_000_000  # codes a process keeps (48 bytes each at 384-d); least recently used memories go
)
FLOAT_CACHE_ROWS = 4 * (
    STATS_SAMPLE + 2 * CODE_CANDIDATES
)  # float rows a process keeps of a memory, the latest read
FLOAT_CACHE_BYTES = 64 << 20  # float rows a process keeps in all; least recently used memories' go first
PIECE_SHARE = 0.7  # of a message's closeness that its best piece decides


def _pack(vectors: list[list[float]]) -> bytes:
    return b"".join(array.array("f", v).tobytes() for v in vectors)


def _rows_of(vector) -> list:
    """A put item's vectors: one vector (a list of floats) or a list of them (whole, then pieces)."""
    return list(vector) if vector and isinstance(vector[0], (list, tuple, array.array)) else [vector]


def closeness_of(blobs: list[bytes], query) -> list[float | None]:
    """`closeness` of each stored row (float32 bytes: the whole vector, then the pieces') to a unit
    query, None where the sizes do not fit: with numpy one copy of the rows' bytes read as one
    matrix, no per-row conversion."""
    width = 4 * len(query)
    fits = [bool(width) and 0 < len(b) and not len(b) % width for b in blobs]
    good = [b for b, fit in zip(blobs, fits, strict=True) if fit]
    if not good:
        return [None] * len(blobs)
    try:
        import numpy
    except ImportError:
        scores = [closeness(unpack(b), query) for b in good]
    else:
        # einsum's own loop, not BLAS: a BLAS product this size wakes OpenBLAS's threads, which
        # then spin and slow the process's next model call (the query's embedding) 2×.
        every = numpy.einsum(
            "ij,j->i",
            numpy.frombuffer(b"".join(good), dtype=numpy.float32).reshape(-1, len(query)),
            numpy.asarray(query, dtype=numpy.float32),
        )
        counts = numpy.fromiter((len(b) // width for b in good), dtype=numpy.int64, count=len(good))
        starts = numpy.concatenate(([0], numpy.cumsum(counts)[:-1]))
        scores = (
            (1 - PIECE_SHARE) * every[starts] + PIECE_SHARE * numpy.maximum.reduceat(every, starts)
        ).tolist()
    found = iter(scores)
    return [next(found) if fit else None for fit in fits]


def closeness(stored, query) -> float:
    """A stored row's closeness to a unit query vector (pure Python; `closeness_of` does the same
    with numpy): (1 − PIECE_SHARE)·whole + PIECE_SHARE·max(whole, pieces). None when the sizes
    do not fit."""
    dim = len(query)
    if not dim or not len(stored) or len(stored) % dim:
        return None
    cosines = [
        sum(a * b for a, b in zip(stored[i : i + dim], query, strict=True))
        for i in range(0, len(stored), dim)
    ]
    return (1 - PIECE_SHARE) * cosines[0] + PIECE_SHARE * max(cosines)


def unpack(blob) -> array.array:
    out = array.array("f")
    out.frombytes(bytes(blob))
    return out


def codes_of(vectors: list) -> bytes:
    """The sign bits of each vector (bit i set when component i > 0), padded to 64-bit words,
    little-endian: (dim + 63) // 64 * 8 bytes a vector, end to end."""
    import numpy

    if not len(vectors):
        return b""
    values = numpy.asarray(vectors, dtype=numpy.float32).reshape(len(vectors), -1)
    bits = numpy.zeros((len(values), (values.shape[1] + 63) // 64 * 64), dtype=bool)
    bits[:, : values.shape[1]] = values > 0
    return numpy.packbits(bits, axis=1, bitorder="little").tobytes()


class VectorStore:
    """Vectors of a memory's messages for one model. The only code that reads or writes them."""

    @staticmethod
    def put(*, memory_id: str, model: str, items: list[tuple[int, int, list[float]]]) -> int:
        """Store (entry_id, seq, vector or [whole, *pieces]) rows, replacing what those entries had.
        One upsert: two workers embedding the same message at once (overlapping outbox rows of one
        memory) both succeed, and the later write wins."""
        if not items:
            return 0
        rows = [(e, s, _rows_of(v)) for e, s, v in items]
        RecallVector.objects.bulk_create(
            [
                RecallVector(
                    entry_id=e,
                    memory_id=memory_id,
                    seq=s,
                    model=model,
                    dim=len(vs[0]),
                    vector=_pack(vs),
                    codes=codes_of(vs),
                )
                for e, s, vs in rows
            ],
            update_conflicts=True,
            unique_fields=["entry"],
            update_fields=["memory", "seq", "model", "dim", "vector", "codes"],
        )
        _stale(entry_ids={e for e, _, _ in rows}, memory_id=memory_id)
        return len(rows)

    @staticmethod
    def missing(*, memory_id: str, model: str, limit: int, upto_seq: int | None = None) -> list[int]:
        """Newest committed messages of the memory (up to `upto_seq`) without a vector of this model
        (entry ids); a message with no text is never embedded, so it is not missing one."""
        have = RecallVector.objects.filter(memory_id=memory_id, model=model).values("entry_id")
        rows = Entry.objects.filter(
            memory_id=memory_id, kind="message", committed=True, role__in=("user", "assistant")
        )
        if upto_seq is not None:
            rows = rows.filter(seq__lte=upto_seq)
        return list(
            rows.exclude(content="")
            .exclude(id__in=have)
            .order_by("-seq")
            .values_list("id", flat=True)[:limit]
        )

    @staticmethod
    def has_other_models(*, memory_id: str, model: str) -> bool:
        return RecallVector.objects.filter(memory_id=memory_id).exclude(model=model).exists()

    @staticmethod
    def drop_other_models(*, memory_id: str, model: str) -> int:
        deleted, _ = RecallVector.objects.filter(memory_id=memory_id).exclude(model=model).delete()
        return deleted

    @staticmethod
    def remove(*, entry_ids: list[int]) -> int:
        deleted, _ = RecallVector.objects.filter(entry_id__in=entry_ids).delete()
        if deleted:
            _stale(entry_ids=set(entry_ids))
        return deleted

    @staticmethod
    def of_entries(*, entry_ids: list[int], model: str) -> dict[int, bytes]:
        """{entry_id: float32 bytes} of these entries for this model (those that have one)."""
        rows = RecallVector.objects.filter(entry_id__in=entry_ids, model=model).values_list(
            "entry_id", "vector"
        )
        return dict(rows)

    @staticmethod
    def at_seqs(*, memory_id: str, model: str, seqs: list[int]) -> list[tuple[int, int, bytes]]:
        """(entry_id, seq, float32 bytes) of the rows at these seqs (those that have one)."""
        if not seqs:
            return []
        sql = (
            f"SELECT entry_id, seq, vector FROM {RecallVector._meta.db_table} "
            f"WHERE memory_id = %s AND model = %s AND seq IN ({', '.join(['%s'] * len(seqs))})"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [memory_id, model, *seqs])
            return cursor.fetchall()

    @staticmethod
    def codes(*, memory_id: str, model: str, after_seq: int | None = None) -> list[tuple[int, int, bytes]]:
        """(entry_id, seq, codes) of every row (or those after a seq), oldest first."""
        sql = (
            f"SELECT entry_id, seq, codes FROM {RecallVector._meta.db_table} "
            "WHERE memory_id = %s AND model = %s"
        )
        params: list = [memory_id, model]
        if after_seq is not None:
            sql += " AND seq > %s"
            params.append(after_seq)
        with connection.cursor() as cursor:
            cursor.execute(sql + " ORDER BY seq", params)
            return cursor.fetchall()


# --- candidates over the whole memory: each process's copy of the codes ---------------------------


class Codes:
    """One memory's codes for one model in this process: the row's seq of each vector and the
    vectors' bits as 64-bit words, oldest first, in arrays that grow by half again when full (an
    append copies nothing already held). The bits are held word by word (`bits[w]` is word w of
    every vector, contiguous), so a scan XORs and counts one flat column at a time. Rows stored after the
    copy was read are added by seq (`VectorStore.codes(after_seq=…)`); the whole copy is read again
    after CODE_CACHE_SECONDS, so a row stored out of seq order (a re-index) or changed joins by
    then. A removed row is harmless meanwhile: its float vector is gone, so it is never rescored."""

    def __init__(self, words: int):
        import numpy

        self.words = words
        self.seqs = numpy.empty(0, dtype=numpy.int64)
        self.bits = numpy.empty((words, 0), dtype="<u8")
        self.last_seq = -1
        self.vectors = 0
        self.read_at = time.monotonic()
        # The float rows read lately, end to end in one matrix (a row's whole vector, then its
        # pieces'), so a search gathers them without a copy per row.
        self.floats: dict[int, tuple[int, int, int]] = {}  # seq: (entry_id, first vector, vectors)
        self.matrix = numpy.empty((0, 0), dtype=numpy.float32)
        self.filled = 0  # vectors in `matrix`, live or dropped
        self.float_bytes = 0  # of the live rows
        self.lock = threading.Lock()

    def add(self, rows: list[tuple[int, int, bytes]]) -> None:
        import numpy

        width = 8 * self.words
        rows = [r for r in rows if r[2] and not len(r[2]) % width]
        if not rows:
            return
        counts = numpy.fromiter((len(r[2]) // width for r in rows), dtype=numpy.int64, count=len(rows))
        bits = numpy.frombuffer(b"".join(bytes(r[2]) for r in rows), dtype="<u8").reshape(-1, self.words)
        seqs = numpy.fromiter((r[1] for r in rows), dtype=numpy.int64, count=len(rows))
        held, total = self.vectors, self.vectors + len(bits)
        if total > len(self.seqs):
            room = max(total, len(self.seqs) * 3 // 2)
            self.seqs = numpy.resize(self.seqs, room)
            grown = numpy.empty((self.words, room), dtype="<u8")
            grown[:, :held] = self.bits[:, :held]
            self.bits = grown
        self.seqs[held:total] = numpy.repeat(seqs, counts)
        self.bits[:, held:total] = bits.T
        self.vectors = total
        self.last_seq = max(self.last_seq, int(seqs.max()))
        if held and self.seqs[held - 1] > self.seqs[held]:  # appended rows always come after; kept sorted
            order = numpy.argsort(self.seqs[:total], kind="stable")
            self.seqs[:total], self.bits[:, :total] = self.seqs[order], self.bits[:, order]

    def newest(self, before_seq: int | None, count: int) -> list[int]:
        """Seqs of the newest `count` rows before `before_seq` (all when None), newest first."""
        import numpy

        end = (
            self.vectors
            if before_seq is None
            else int(numpy.searchsorted(self.seqs[: self.vectors], before_seq))
        )
        tail = self.seqs[
            max(0, end - count * (1 + PIECE_MAX)) : end
        ]  # a row holds at most 1 + PIECE_MAX vectors
        if not len(tail):
            return []
        distinct = tail[
            numpy.concatenate(([True], tail[1:] != tail[:-1]))
        ]  # sorted: a row's vectors are adjacent
        return distinct[::-1][:count].tolist()

    def scores(
        self, *, memory_id: str, model: str, seqs: list[int], query
    ) -> tuple[list, list, object] | None:
        """([entry_id], [seq], closeness of each) of the rows at these seqs, in their order (those
        that have one): the ones read lately from this copy's matrix, the rest read now
        (`VectorStore.at_seqs`) and kept (when more than FLOAT_CACHE_ROWS are, only the ones this
        call used stay). None when a row's vectors are not of the query's dimension."""
        import numpy

        dim = len(query)
        with self.lock:
            missing = [s for s in seqs if s not in self.floats]
        found = VectorStore.at_seqs(memory_id=memory_id, model=model, seqs=missing) if missing else []
        width = 4 * dim
        if any(not blob or len(blob) % width for _, _, blob in found):
            return None
        with self.lock:
            if self.matrix.shape[1] != dim:
                if self.floats:  # rows held of another dimension: nothing comparable
                    return None
                self._reset(dim)
            self._append([(e, s, blob) for e, s, blob in found if s not in self.floats], dim)
            floats = self.floats
            kept = [(floats[seq], seq) for seq in seqs if seq in floats]
            entry_ids = [k[0] for k, _ in kept]
            out_seqs = [seq for _, seq in kept]
            firsts = numpy.fromiter((k[1] for k, _ in kept), dtype=numpy.int64, count=len(kept))
            counts = numpy.fromiter((k[2] for k, _ in kept), dtype=numpy.int64, count=len(kept))
            starts = numpy.cumsum(counts) - counts
            vectors = self.matrix[numpy.repeat(firsts - starts, counts) + numpy.arange(int(counts.sum()))]
            live = self.float_bytes // width
            if (
                len(floats) > FLOAT_CACHE_ROWS or self.filled > 2 * live + 1000
            ):  # full: keep the rows used now
                self._reset(dim)
                self._append(
                    [
                        (e, s, vectors[a : a + n])
                        for e, s, a, n in zip(
                            entry_ids, out_seqs, starts.tolist(), counts.tolist(), strict=True
                        )
                    ],
                    dim,
                )
        if not kept:
            return entry_ids, out_seqs, numpy.empty(0)
        # einsum's own loop, not BLAS (see closeness_of).
        every = numpy.einsum("ij,j->i", vectors, numpy.asarray(query, dtype=numpy.float32))
        closeness = (1 - PIECE_SHARE) * every[starts] + PIECE_SHARE * numpy.maximum.reduceat(every, starts)
        return entry_ids, out_seqs, closeness.astype(numpy.float64)

    def _reset(self, dim: int) -> None:
        import numpy

        self.floats, self.filled, self.float_bytes = {}, 0, 0
        self.matrix = numpy.empty((0, dim), dtype=numpy.float32)

    def _append(self, rows: list, dim: int) -> None:
        """Add (entry_id, seq, float32 bytes or a vectors × dim array) rows to the matrix (under the lock)."""
        import numpy

        if not rows:
            return
        blocks = [
            numpy.frombuffer(bytes(r[2]), dtype=numpy.float32).reshape(-1, dim)
            if isinstance(r[2], (bytes, memoryview))
            else r[2]
            for r in rows
        ]
        total = self.filled + sum(len(b) for b in blocks)
        if total > len(self.matrix):
            grown = numpy.empty((max(total, len(self.matrix) * 3 // 2), dim), dtype=numpy.float32)
            grown[: self.filled] = self.matrix[: self.filled]
            self.matrix = grown
        for (entry_id, seq, _), block in zip(rows, blocks, strict=True):
            self.matrix[self.filled : self.filled + len(block)] = block
            self.floats[seq] = (entry_id, self.filled, len(block))
            self.filled += len(block)
            self.float_bytes += block.nbytes

    def forget_floats(self, entry_ids: set[int] | None = None) -> None:
        """Drop the kept float rows (of these entries only, when given)."""
        with self.lock:
            if entry_ids is None:
                self._reset(self.matrix.shape[1])
                return
            for seq, (entry_id, _, count) in list(self.floats.items()):
                if entry_id in entry_ids:
                    del self.floats[seq]
                    self.float_bytes -= 4 * count * self.matrix.shape[1]

    def best(self, query_bits, before_seq: int, limit: int) -> list[int]:
        """Seqs of up to `limit` rows before `before_seq`, best first by their closest vector:
        the fewest bits differing from the query's (a row's whole vector or one of its
        sentences'; the float rescoring then weighs them as `closeness` does). One pass over the
        codes: XOR, popcount, a histogram of the distances for the cut, a sort of what passes it."""
        import numpy

        end = int(numpy.searchsorted(self.seqs[: self.vectors], before_seq, side="left"))
        if not end or limit < 1:
            return []
        differ = _popcount(self.bits[:, :end], query_bits.reshape(-1))
        take = min(end, 4 * limit)  # records: a row may have several among the closest
        cut = int(
            numpy.searchsorted(numpy.cumsum(numpy.bincount(differ)), take)
        )  # the take-th smallest distance
        top = numpy.flatnonzero(differ <= cut)
        top = top[numpy.argsort(differ[top], kind="stable")][:take]
        ranked = self.seqs[top]
        _, first = numpy.unique(ranked, return_index=True)
        return ranked[numpy.sort(first)[:limit]].tolist()


_BITS_IN_BYTE = None


def _popcount(columns, query):
    """Bits differing between each vector and the query (uint16 a vector), from the codes held
    word by word (`columns[w]`: word w of every vector): one flat XOR and count a word."""
    import numpy

    total = numpy.zeros(columns.shape[1], dtype=numpy.uint16)
    for column, word in zip(columns, query, strict=True):
        total += _count_bits(column ^ word)
    return total


def _count_bits(words):
    import numpy

    if hasattr(numpy, "bitwise_count"):  # numpy ≥ 2.0
        return numpy.bitwise_count(words)
    global _BITS_IN_BYTE
    if _BITS_IN_BYTE is None:
        _BITS_IN_BYTE = numpy.array([bin(i).count("1") for i in range(256)], dtype=numpy.uint8)
    return _BITS_IN_BYTE[words.view(numpy.uint8)].reshape(len(words), 8).sum(axis=1, dtype=numpy.uint8)


_CODES: OrderedDict[tuple[str, str], Codes] = OrderedDict()
_CODES_LOCK = threading.Lock()


def codes_for(memory_id: str, model: str, dim: int) -> Codes:
    """This process's copy of the memory's codes, brought up to date (rows stored since the last
    look, or all of them again when the copy is older than CODE_CACHE_SECONDS)."""
    key = (memory_id, model)
    words = (dim + 63) // 64
    with _CODES_LOCK:
        have = _CODES.get(key)
        if have is not None:
            _CODES.move_to_end(key)
    if have is None or have.words != words or time.monotonic() - have.read_at > CODE_CACHE_SECONDS:
        have = Codes(words)
        have.add(VectorStore.codes(memory_id=memory_id, model=model))
    else:
        have.add(VectorStore.codes(memory_id=memory_id, model=model, after_seq=have.last_seq))
    with _CODES_LOCK:
        _CODES[key] = have
        while sum(c.vectors for c in _CODES.values()) > CODE_CACHE_VECTORS and len(_CODES) > 1:
            _CODES.popitem(last=False)
        held = sum(c.float_bytes for c in _CODES.values())
        for other in list(_CODES.values())[:-1]:  # least recently used first; this memory's are kept
            if held <= FLOAT_CACHE_BYTES:
                break
            held -= other.float_bytes
            other.forget_floats()
    return have


def _stale(*, entry_ids: set[int], memory_id: str | None = None) -> None:
    """This process's kept float rows of these entries are dropped (they were replaced or removed
    here; another process's copies follow within CODE_CACHE_SECONDS, when its codes are read again)."""
    with _CODES_LOCK:
        copies = [c for (m, _), c in _CODES.items() if memory_id is None or m == memory_id]
    for copy in copies:
        if copy.floats:
            copy.forget_floats(entry_ids)


def query_bits(query, words: int):
    import numpy

    return numpy.frombuffer(codes_of([query]), dtype="<u8").reshape(1, words)
