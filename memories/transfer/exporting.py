"""The export: a memory as the document's lines, read in bounded chunks in seq order, so a
memory of any size is written in bounded memory. Nothing here writes to the database."""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime

import orjson
from django.utils import timezone

from memories.models import (
    Entry,
    ErrorDigest,
    Fact,
    FactTombstone,
    Memory,
    MemoryFile,
    MemoryFileVersion,
    Thread,
    Turn,
)
from memories.transfer.format import (
    CHUNK,
    DIGEST_FIELDS,
    ENTRY_FIELDS,
    FACT_FIELDS,
    FILE_FIELDS,
    FILE_VERSION_FIELDS,
    FORMAT,
    MEMORY_FIELDS,
    THREAD_COUNTS,
    THREAD_FIELDS,
    TURN_FIELDS,
    VERSION,
)

# Memory files are up to THREADLESS_MEMORY_FILE_MAX_BYTES each: fewer rows a chunk.
FILE_CHUNK = 100


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _line(record: dict) -> bytes:
    return orjson.dumps(record) + b"\n"


def _memory_records(memory: Memory) -> Iterator[dict]:
    yield {
        "type": "memory",
        "id": memory.id,
        **{name: getattr(memory, name) for name in MEMORY_FIELDS},
        "created_at": _time(memory.created_at),
    }


def _thread_records(memory: Memory) -> Iterator[dict]:
    rows = (
        Thread.objects.filter(memory_id=memory.id)
        .order_by("created_at", "name")
        .values(*THREAD_FIELDS, *THREAD_COUNTS, "created_at", "updated_at")
    )
    for row in rows.iterator(chunk_size=CHUNK):
        yield {
            "type": "thread",
            **row,
            "created_at": _time(row["created_at"]),
            "updated_at": _time(row["updated_at"]),
        }


def _turn_records(memory: Memory) -> Iterator[dict]:
    rows = (
        Turn.objects.filter(memory_id=memory.id)
        .order_by("thread", "number")
        .values(*TURN_FIELDS, "created_at", "finished_at")
    )
    for row in rows.iterator(chunk_size=CHUNK):
        yield {
            "type": "turn",
            **row,
            "created_at": _time(row["created_at"]),
            "finished_at": _time(row["finished_at"]),
        }


def _entry_records(memory: Memory) -> Iterator[dict]:
    rows = Entry.objects.filter(memory_id=memory.id).order_by("seq").values(*ENTRY_FIELDS, "created_at")
    for row in rows.iterator(chunk_size=CHUNK):
        yield {"type": "entry", **row, "created_at": _time(row["created_at"])}


def _seq_of(memory: Memory, entry_ids: Iterable[int]) -> dict[int, int]:
    ids = list(entry_ids)
    return dict(Entry.objects.filter(memory_id=memory.id, id__in=ids).values_list("id", "seq")) if ids else {}


def _digest_records(memory: Memory) -> Iterator[dict]:
    rows = (
        ErrorDigest.objects.filter(memory_id=memory.id)
        .order_by("id")
        .values(*DIGEST_FIELDS, "entry__seq", "created_at")
    )
    for row in rows.iterator(chunk_size=CHUNK):
        seq = row.pop("entry__seq")
        yield {"type": "digest", **row, "entry_seq": seq, "created_at": _time(row["created_at"])}


def _fact_records(memory: Memory) -> Iterator[dict]:
    facts = list(
        Fact.objects.filter(memory_id=memory.id)
        .order_by("created_at", "id")
        .values(
            "id",
            *FACT_FIELDS,
            "source_entry_ids",
            "superseded_by_id",
            "valid_from",
            "valid_to",
            "created_at",
            "updated_at",
        )
    )
    seqs = _seq_of(memory, {i for f in facts for i in f["source_entry_ids"] if isinstance(i, int)})
    for fact in facts:
        sources = fact.pop("source_entry_ids")
        yield {
            "type": "fact",
            **{k: v for k, v in fact.items() if k != "superseded_by_id"},
            "superseded_by": fact["superseded_by_id"],
            "source_entry_seqs": [seqs[i] for i in sources if i in seqs],
            "valid_from": _time(fact["valid_from"]),
            "valid_to": _time(fact["valid_to"]),
            "created_at": _time(fact["created_at"]),
            "updated_at": _time(fact["updated_at"]),
        }
    for row in (
        FactTombstone.objects.filter(memory_id=memory.id)
        .order_by("id")
        .values("normalized", "slot", "upto_seq")
    ):
        yield {"type": "fact_tombstone", **row}


def _file_records(memory: Memory) -> Iterator[dict]:
    rows = (
        MemoryFile.objects.filter(memory_id=memory.id)
        .order_by("path")
        .values(*FILE_FIELDS, "created_at", "updated_at")
    )
    for row in rows.iterator(chunk_size=FILE_CHUNK):
        yield {
            "type": "file",
            **row,
            "created_at": _time(row["created_at"]),
            "updated_at": _time(row["updated_at"]),
        }
    versions = MemoryFileVersion.objects.filter(memory_id=memory.id).order_by(
        "path", "version", "replaced_at", "id"
    )
    for row in versions.values(*FILE_VERSION_FIELDS, "changed_at", "replaced_by", "replaced_at").iterator(
        chunk_size=FILE_CHUNK
    ):
        yield {
            "type": "file_version",
            **row,
            "changed_at": _time(row["changed_at"]),
            "replaced_at": _time(row["replaced_at"]),
        }


# What an export writes after the header, in order. A new kind of record adds its function here
# (and its importer to `document.IMPORTERS`).
EXPORTERS: list[Callable[[Memory], Iterator[dict]]] = [
    _memory_records,
    _thread_records,
    _turn_records,
    _entry_records,
    _digest_records,
    _fact_records,
    _file_records,
]


def memory_export(*, memory: Memory) -> Iterator[bytes]:
    """The document, line by line (bytes, each ending in a newline), read in bounded chunks."""
    digest = hashlib.sha256()
    count = 0
    header = {
        "type": "header",
        "format": FORMAT,
        "version": VERSION,
        "exported_at": _time(timezone.now()),
        "source": {"memory_id": memory.id},
    }
    for record in itertools.chain([header], *(exporter(memory) for exporter in EXPORTERS)):
        line = _line(record)
        digest.update(line)
        count += 1
        yield line
    yield _line({"type": "end", "records": count, "sha256": digest.hexdigest()})
