"""Export and import of one memory as a versioned JSON Lines document (docs/deployment.md,
"Export and import").

The document is one JSON object per line, each with a `type`:

    header          {"type": "header", "format": "threadless.memory", "version": 1, "exported_at", "source"}
    memory          the memory's own fields (metadata, instructions, policy, summary, counters)
    turn            one per turn (state, input, actions, task errors, timings)
    entry           one per entry, in seq order (kind, role, content or parts, tool calls,
                    commit flag, tokens, created_at)
    digest          an error digest, tied to its entry by `entry_seq`
    fact            a fact with its provenance (`source_entry_seqs`) and history (`superseded_by`)
    fact_tombstone  a statement a person removed (extraction must not bring it back)
    file            a memory file or directory under /memories, by path (content, version, who
                    changed it, times), in path order so a folder comes before what it holds
    file_version    a content a change replaced (kept for the console), deleted files' included
    end             {"type": "end", "records": n, "sha256": <hex of every line before it>}

Entries and facts refer to each other by sequence number and exported fact id, never by a
database id, so a document moves between installs. A new kind of record is a new `type` with an exporter and
an importer registered below; a reader refuses a type it does not know and a `version` newer than its own,
rather than drop part of a memory.

Export streams: rows are read in chunks in seq order, so a memory of any size is written in
bounded memory. Import reads the document line by line inside one transaction, checks the
`end` record's count and digest last, and rolls everything back on any error: a truncated,
damaged or newer document leaves nothing behind. Importing the same document again into the same
project returns the memory the first import made (keyed by the document's digest).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime

import orjson
from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from common.errors import Conflict, InvalidRequest
from memories import embeddings, recall
from memories.models import (
    Entry,
    ErrorDigest,
    Fact,
    FactTombstone,
    IdempotencyRecord,
    Memory,
    MemoryFile,
    MemoryFileVersion,
    Turn,
)
from memories.services import files
from memories.services.outbox import outbox_enqueue
from projects.models import Project

FORMAT = "threadless.memory"
VERSION = 1
CHUNK = 2000
MAX_LINE_BYTES = 16 * 1024 * 1024
IMPORT_SCOPE = "memory-import"

MEMORY_FIELDS = (
    "external_id",
    "metadata",
    "instructions",
    "policy",
    "summary",
    "summary_upto_seq",
    "last_budget_tokens",
    "last_seq",
    "last_turn",
    "turn_start_seq",
    "message_count",
    "token_count",
    "digest_count",
)
TURN_FIELDS = ("number", "state", "input", "actions", "task_errors", "output", "attempt", "duration_ms")
ENTRY_FIELDS = (
    "seq",
    "turn",
    "kind",
    "role",
    "content",
    "parts",
    "name",
    "tool_calls",
    "tool_call_id",
    "task_id",
    "key",
    "value",
    "committed",
    "tokens",
)
DIGEST_FIELDS = ("turn", "task_id", "task_type", "error_type", "agent_id", "text", "raw_error")
FACT_FIELDS = ("text", "normalized", "slot", "extractor", "confidence", "active", "tokens")
FILE_FIELDS = ("path", "is_dir", "content", "version", "changed_by")
FILE_VERSION_FIELDS = ("path", "version", "content", "changed_by", "command")
# Memory files are up to THREADLESS_MEMORY_FILE_MAX_BYTES each: fewer rows a chunk, and an import
# writes its pending files once they hold this many bytes.
FILE_CHUNK = 100
FILE_FLUSH_BYTES = 8 * 1024 * 1024


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _line(record: dict) -> bytes:
    return orjson.dumps(record) + b"\n"


# --- export ------------------------------------------------------------------------------------


def _memory_records(memory: Memory) -> Iterator[dict]:
    yield {
        "type": "memory",
        "id": memory.id,
        **{name: getattr(memory, name) for name in MEMORY_FIELDS},
        "created_at": _time(memory.created_at),
    }


def _turn_records(memory: Memory) -> Iterator[dict]:
    rows = (
        Turn.objects.filter(memory_id=memory.id)
        .order_by("number")
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
        .values("id", *FACT_FIELDS, "source_entry_ids", "superseded_by_id", "created_at", "updated_at")
    )
    seqs = _seq_of(memory, {i for f in facts for i in f["source_entry_ids"] if isinstance(i, int)})
    for fact in facts:
        sources = fact.pop("source_entry_ids")
        yield {
            "type": "fact",
            **{k: v for k, v in fact.items() if k != "superseded_by_id"},
            "superseded_by": fact["superseded_by_id"],
            "source_entry_seqs": [seqs[i] for i in sources if i in seqs],
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
# (and its reader to IMPORTERS).
EXPORTERS: list[Callable[[Memory], Iterator[dict]]] = [
    _memory_records,
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


# --- import ------------------------------------------------------------------------------------


class _Reader:
    """The document's records, one at a time, with the running digest and count the `end`
    record is checked against."""

    def __init__(self, lines: Iterable[bytes]) -> None:
        self.lines = iter(lines)
        self.digest = hashlib.sha256()
        self.count = 0
        self.end: dict | None = None

    def __iter__(self) -> Iterator[dict]:
        for number, raw in enumerate(self.lines, start=1):
            if self.end is not None:
                if raw.strip():
                    raise InvalidRequest(f"line {number}: content after the end record.")
                continue
            if len(raw) > MAX_LINE_BYTES:
                raise InvalidRequest(f"line {number}: longer than {MAX_LINE_BYTES} bytes.")
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:
                raise InvalidRequest(f"line {number}: not JSON (the document is damaged).")
            if not isinstance(record, dict) or not isinstance(record.get("type"), str):
                raise InvalidRequest(f"line {number}: not a record (an object with a type).")
            if record["type"] == "end":
                self.end = record
                continue
            line = raw if raw.endswith(b"\n") else raw + b"\n"
            self.digest.update(line)
            self.count += 1
            yield record

    def check_end(self) -> str:
        if self.end is None:
            raise InvalidRequest(
                "The document ends without its end record: it is truncated.",
                hint="Export the memory again and send the whole file.",
            )
        if self.end.get("records") != self.count or self.end.get("sha256") != self.digest.hexdigest():
            raise InvalidRequest(
                "The document does not match its end record (count or sha256): it is damaged.",
                hint="Export the memory again and send the file unchanged.",
            )
        return self.digest.hexdigest()


def _check_header(record: dict) -> None:
    if record.get("type") != "header" or record.get("format") != FORMAT:
        raise InvalidRequest(
            f"line 1: not a Threadless memory export (a header record with format {FORMAT!r})."
        )
    version = record.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidRequest("header: version must be a positive integer.")
    if version > VERSION:
        raise InvalidRequest(
            f"The document is format version {version}, newer than this install reads (up to {VERSION}).",
            hint="Upgrade this Threadless install, then import again.",
        )


def _when(record: dict, name: str) -> datetime | None:
    value = record.get(name)
    if value is None:
        return None
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None:
        raise InvalidRequest(f"{record['type']}.{name}: not an ISO 8601 time.")
    return parsed


def _fields(record: dict, names: tuple[str, ...]) -> dict:
    return {name: record[name] for name in names if name in record}


FILE_COMMANDS = frozenset({"create", "str_replace", "insert", "delete", "rename"})


def _file_path(record: dict) -> str:
    """The record's path relative to /memories, refused unless the memory tool would have made it."""
    path = record.get("path")
    try:
        relative = files.file_path(f"{files.ROOT}/{path}") if isinstance(path, str) else None
    except files.Refused as refusal:
        raise InvalidRequest(f"{record['type']}.path: {refusal}")
    if not relative or relative != path:
        raise InvalidRequest(
            f"{record['type']}.path: {str(path)[:80]!r} is not a path under /memories "
            "(relative, no empty, '.' or '..' parts)."
        )
    return relative


def _file_text(record: dict, name: str, *, limit: int | None = None) -> str:
    value = record.get(name, "")
    if not isinstance(value, str) or "\x00" in value or (limit is not None and len(value) > limit):
        raise InvalidRequest(
            f"{record['type']}.{name}: must be a string without NUL characters"
            + (f", at most {limit} characters." if limit is not None else ".")
        )
    return value


def _file_version_number(record: dict) -> int:
    version = record.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidRequest(f"{record['type']}.version: must be a positive integer.")
    return version


class _Import:
    """One import's state: the new memory, the entry ids by seq, the facts by exported id."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.memory: Memory | None = None
        self.external_id_taken = False  # refused once the document is known not to be imported already
        self.entries: list[Entry] = []
        self.entry_ids: dict[int, int] = {}
        self.turns: list[Turn] = []
        self.facts: dict[str, Fact] = {}
        self.superseded: dict[str, str] = {}
        self.times: list[tuple[type, int | str, dict]] = []
        self.limits = files.FileLimits.from_settings()
        self.file_kinds: dict[str, bool] = {}  # every file's path so far, and whether it is a directory
        self.file_bytes = 0
        self.files: list[tuple[MemoryFile, dict]] = []  # not written yet, with their exported times
        self.versions: list[tuple[MemoryFileVersion, dict]] = []
        self.pending_file_bytes = 0

    def need_memory(self, kind: str) -> Memory:
        if self.memory is None:
            raise InvalidRequest(f"A {kind} record comes before the memory record.")
        return self.memory

    def memory_record(self, record: dict) -> None:
        if self.memory is not None:
            raise InvalidRequest("The document holds more than one memory record.")
        fields = _fields(record, MEMORY_FIELDS)
        external_id = record.get("external_id")
        if (
            external_id is not None
            and Memory.objects.filter(project=self.project, external_id=external_id).exists()
        ):
            # The memory its own earlier import made, or another one: known at the end record.
            self.external_id_taken = True
            fields["external_id"] = None
        self.memory = Memory.objects.create(
            project=self.project,
            **fields,
            background_upto_seq=record.get("last_seq", 0),
        )
        self.times.append((Memory, self.memory.pk, {"created_at": _when(record, "created_at")}))

    def turn_record(self, record: dict) -> None:
        memory = self.need_memory("turn")
        self.turns.append(
            (
                Turn(memory=memory, **_fields(record, TURN_FIELDS), finished_at=_when(record, "finished_at")),
                _when(record, "created_at"),
            )
        )
        if len(self.turns) >= CHUNK:
            self.flush_turns()

    def entry_record(self, record: dict) -> None:
        memory = self.need_memory("entry")
        if not isinstance(record.get("seq"), int) or record["seq"] in self.entry_ids:
            raise InvalidRequest("entry.seq: each entry needs its own integer seq.")
        self.entries.append(
            (Entry(memory=memory, **_fields(record, ENTRY_FIELDS)), _when(record, "created_at"))
        )
        self.entry_ids[record["seq"]] = 0
        if len(self.entries) >= CHUNK:
            self.flush_entries()

    def digest_record(self, record: dict) -> None:
        memory = self.need_memory("digest")
        self.flush_entries()
        entry_id = (
            self.entry_ids.get(record.get("entry_seq")) if record.get("entry_seq") is not None else None
        )
        digest = ErrorDigest.objects.create(
            memory=memory, project=self.project, entry_id=entry_id, **_fields(record, DIGEST_FIELDS)
        )
        self.times.append((ErrorDigest, digest.pk, {"created_at": _when(record, "created_at")}))

    def fact_record(self, record: dict) -> None:
        memory = self.need_memory("fact")
        self.flush_entries()
        old_id = record.get("id")
        if not isinstance(old_id, str) or old_id in self.facts:
            raise InvalidRequest("fact.id: each fact needs its own id.")
        seqs = record.get("source_entry_seqs") or []
        if not isinstance(seqs, list):
            raise InvalidRequest("fact.source_entry_seqs: must be a list of seqs.")
        fact = Fact.objects.create(
            memory=memory,
            **_fields(record, FACT_FIELDS),
            source_entry_ids=[self.entry_ids[s] for s in seqs if s in self.entry_ids],
        )
        self.facts[old_id] = fact
        if record.get("superseded_by"):
            self.superseded[old_id] = record["superseded_by"]
        self.times.append(
            (
                Fact,
                fact.pk,
                {"created_at": _when(record, "created_at"), "updated_at": _when(record, "updated_at")},
            )
        )

    def tombstone_record(self, record: dict) -> None:
        memory = self.need_memory("fact_tombstone")
        FactTombstone.objects.create(memory=memory, **_fields(record, ("normalized", "slot", "upto_seq")))

    def file_record(self, record: dict) -> None:
        memory = self.need_memory("file")
        path = _file_path(record)
        if path in self.file_kinds:
            raise InvalidRequest(f"file {path}: the document holds this path twice.")
        is_dir = record.get("is_dir", False)
        if not isinstance(is_dir, bool):
            raise InvalidRequest("file.is_dir: must be true or false.")
        content = _file_text(record, "content")
        if is_dir and content:
            raise InvalidRequest(f"file {path}: a directory holds no content.")
        size = len(content.encode("utf-8"))
        self.file_bytes += size
        self.file_kinds[path] = is_dir
        limits = self.limits
        if (
            size > limits.file_bytes
            or len(self.file_kinds) > limits.files
            or self.file_bytes > limits.total_bytes
        ):
            raise InvalidRequest(
                f"The memory's files exceed this install's limits ({limits.file_bytes:,} bytes a file, "
                f"{limits.files:,} files, {limits.total_bytes:,} bytes in all).",
                hint="Raise THREADLESS_MEMORY_FILE_MAX_BYTES, THREADLESS_MEMORY_FILES_MAX or "
                "THREADLESS_MEMORY_FILES_MAX_TOTAL_BYTES here, then import again.",
            )
        row = MemoryFile(
            memory=memory,
            path=path,
            is_dir=is_dir,
            content=content,
            size=size,
            version=_file_version_number(record),
            changed_by=_file_text(record, "changed_by", limit=120),
        )
        self._pend_file(
            self.files,
            row,
            {"created_at": _when(record, "created_at"), "updated_at": _when(record, "updated_at")},
            size,
        )

    def file_version_record(self, record: dict) -> None:
        memory = self.need_memory("file_version")
        command = record.get("command")
        if command not in FILE_COMMANDS:
            raise InvalidRequest(f"file_version.command: one of {', '.join(sorted(FILE_COMMANDS))}.")
        changed_at = _when(record, "changed_at")
        if changed_at is None:
            raise InvalidRequest("file_version.changed_at: required.")
        content = _file_text(record, "content")
        size = len(content.encode("utf-8"))
        row = MemoryFileVersion(
            memory=memory,
            path=_file_path(record),
            version=_file_version_number(record),
            content=content,
            size=size,
            command=command,
            changed_at=changed_at,
            changed_by=_file_text(record, "changed_by", limit=120),
            replaced_by=_file_text(record, "replaced_by", limit=120),
        )
        self._pend_file(self.versions, row, {"replaced_at": _when(record, "replaced_at")}, size)

    def _pend_file(self, pending: list, row, times: dict, size: int) -> None:
        pending.append((row, times))
        self.pending_file_bytes += size
        if len(pending) >= FILE_CHUNK or self.pending_file_bytes >= FILE_FLUSH_BYTES:
            self.flush_files()

    def flush_files(self) -> None:
        """Insert the pending files and versions, then give them their exported times (auto_now and
        auto_now_add set them to now on insert)."""
        for model, pending in ((MemoryFile, self.files), (MemoryFileVersion, self.versions)):
            if not pending:
                continue
            made = model.objects.bulk_create([row for row, _times in pending])
            names = set()
            for row, (_row, times) in zip(made, pending, strict=True):
                for name, value in times.items():
                    if value is not None:
                        setattr(row, name, value)
                        names.add(name)
            if names:
                model.objects.bulk_update(made, sorted(names), batch_size=500)
            pending.clear()
        self.pending_file_bytes = 0

    @staticmethod
    def _bulk(model, pending: list[tuple]) -> list:
        """Insert a chunk, then give the rows their exported creation times (auto_now_add set
        them to now on insert)."""
        made = model.objects.bulk_create([row for row, _when in pending])
        dated = []
        for row, (_row, created_at) in zip(made, pending, strict=True):
            if created_at is not None:
                row.created_at = created_at
                dated.append(row)
        if dated:
            model.objects.bulk_update(dated, ["created_at"], batch_size=500)
        return made

    def flush_turns(self) -> None:
        if self.turns:
            self._bulk(Turn, self.turns)
            self.turns = []

    def flush_entries(self) -> None:
        if self.entries:
            self.entry_ids.update({e.seq: e.pk for e in self._bulk(Entry, self.entries)})
            self.entries = []

    def finish(self) -> Memory:
        memory = self.need_memory("end")
        self.flush_turns()
        self.flush_entries()
        self.flush_files()
        for path in self.file_kinds:
            folder = path.rpartition("/")[0]
            if folder and self.file_kinds.get(folder) is not True:
                raise InvalidRequest(f"file {path}: the document holds no directory {folder} for it.")
        for old_id, newer in self.superseded.items():
            if newer not in self.facts:
                raise InvalidRequest(f"fact {old_id}: superseded_by names a fact the document does not hold.")
            Fact.objects.filter(pk=self.facts[old_id].pk).update(superseded_by=self.facts[newer].pk)
        if memory.last_seq < max(self.entry_ids, default=0):
            raise InvalidRequest("memory.last_seq: lower than an entry's seq.")
        return memory


IMPORTERS: dict[str, Callable[[_Import, dict], None]] = {
    "memory": _Import.memory_record,
    "turn": _Import.turn_record,
    "entry": _Import.entry_record,
    "digest": _Import.digest_record,
    "fact": _Import.fact_record,
    "fact_tombstone": _Import.tombstone_record,
    "file": _Import.file_record,
    "file_version": _Import.file_version_record,
}


def _previous_import(project: Project, digest: str) -> Memory | None:
    record = IdempotencyRecord.objects.filter(project=project, scope=IMPORT_SCOPE, key=digest).first()
    if record is None:
        return None
    return Memory.objects.filter(project=project, pk=bytes(record.body).decode()).first()


def memory_import(*, project: Project, lines: Iterable[bytes]) -> tuple[Memory, bool]:
    """Bring an exported document into `project` as a new memory, all or nothing: (memory,
    created). The same document imported again answers the memory its first import made."""
    reader = _Reader(lines)
    try:
        with transaction.atomic():
            state = _Import(project)
            records = iter(reader)
            first = next(records, None)
            if first is None:
                raise InvalidRequest("The document is empty.")
            _check_header(first)
            for record in records:
                handler = IMPORTERS.get(record["type"])
                if handler is None:
                    raise InvalidRequest(
                        f"Unknown record type {str(record['type'])[:40]!r}: the document was written "
                        "by a newer or different Threadless.",
                        hint="Upgrade this install.",
                    )
                handler(state, record)
            memory = state.finish()
            digest = reader.check_end()
            earlier = _previous_import(project, digest)
            if earlier is not None:
                transaction.set_rollback(True)  # nothing of this second run is kept
                return earlier, False
            if state.external_id_taken:
                raise Conflict(
                    "A memory with this external_id already exists in the project.",
                    hint="Delete that memory first, or import into another project.",
                )
            _restore_times(state, memory)
            IdempotencyRecord.objects.filter(project=project, scope=IMPORT_SCOPE, key=digest).delete()
            IdempotencyRecord.objects.create(
                project=project, scope=IMPORT_SCOPE, key=digest, status=201, body=memory.pk.encode()
            )
            _index(memory)
            if embeddings.enabled(project):
                # The imported messages' vectors, made by the worker in bounded chunks (vectors jobs,
                # each taking its turn with other projects' work): until then decorate answers as a
                # memory without vectors would.
                outbox_enqueue(memory_id=memory.id, project_id=project.id, kind="vectors", payload={})
    except (TypeError, ValueError, KeyError) as exc:
        raise InvalidRequest(f"A record does not fit the format ({exc.__class__.__name__}).")
    except IntegrityError:
        raise InvalidRequest("The document contradicts itself (a duplicate or a missing reference).")
    except DatabaseError as exc:
        if isinstance(exc.__cause__, (TypeError, ValueError)):
            raise InvalidRequest("A record holds a value of the wrong type.")
        raise
    return memory, True


def _restore_times(state: _Import, memory: Memory) -> None:
    """The exported creation times (auto_now_add set them to now on insert)."""
    for model, pk, values in state.times:
        kept = {name: value for name, value in values.items() if value is not None}
        if kept:
            model.objects.filter(pk=pk).update(**kept)


def _index(memory: Memory) -> None:
    """The recall index of the imported messages (facts came with the document: no extraction)."""
    ids = list(
        Entry.objects.filter(memory=memory, kind="message", committed=True).values_list("id", flat=True)
    )
    for start in range(0, len(ids), CHUNK):
        recall.index_entries(memory_id=memory.id, entry_ids=ids[start : start + CHUNK])
