"""An import's document, read whole and checked before anything is written: each record
through its field rules (`rules`) and its importer here (`IMPORTERS`, by record type), then the
links between records (`Document.finish`), every row it makes ready to insert (`rows`).
What every write derives (a memory's counts, a fact's normalised form and tokens) is derived
again, never taken from the document."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

from django.db import connection
from django.utils import timezone

from common.errors import InvalidRequest
from common.messages import text_of, validate_message
from common.redaction import echo
from memories.facts.base import fact_normalize, fact_tokens
from memories.models import (
    DEFAULT_THREAD,
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
from memories.models import memory_id as new_memory_id
from memories.services import files
from memories.transfer.format import (
    DIGEST_FIELDS,
    ENTRY_FIELDS,
    FILE_VERSION_FIELDS,
    MEMORY_FIELDS,
    THREAD_FIELDS,
    TURN_FIELDS,
)
from memories.transfer.reading import Reader, header_check, refuse
from memories.transfer.rows import InsertRows
from memories.transfer.rules import (
    DIGEST_RULES,
    ENTRY_RULES,
    FACT_RULES,
    FILE_RULES,
    FILE_VERSION_RULES,
    MEMORY_RULES,
    THREAD_RULES,
    TOMBSTONE_RULES,
    TURN_RULES,
    checked,
)
from projects.models import Project

STORED_ROLES = ("user", "assistant", "tool")  # a system message becomes the memory's instructions
COUNTS = ("message_count", "token_count", "digest_count")  # made again from the document's rows


class Document:
    """One document, read whole and checked, with every row it makes ready to insert: nothing is
    written before `write`. Entries and facts refer to each other by seq and exported id; the
    links are checked once the whole document is read (`finish`) and given their new ids when the
    entries are written."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.now = timezone.now()
        self.line = 0  # of the record being read
        self.memory_pk = new_memory_id()
        self.memory: dict | None = None
        self.memory_line = 0
        self.memories = InsertRows(Memory)
        self.threads: dict[str, tuple[int, dict]] = {}  # name -> line, the thread record's fields
        self.thread_rows = InsertRows(Thread)
        self.thread_uses: dict[str, tuple[int, str]] = {}  # name -> the first line and record naming it
        self.turns = InsertRows(Turn)
        self.turn_numbers: set[tuple[str, int]] = set()  # (thread, number)
        self.entries = InsertRows(Entry)
        self.entry_kinds: dict[int, str] = {}  # seq -> kind
        self.entry_threads: dict[int, str] = {}  # seq -> thread
        self.indexed: list[int] = []  # the seqs of committed messages (the recall index's)
        self.messages = self.tokens = 0
        self.thread_counts: dict[str, list[int]] = {}  # thread -> [messages, tokens]
        self.newest_turn: dict[str, int] = {}  # thread -> its highest turn number
        self.newest_said: dict[str, datetime] = {}  # thread -> its newest entry's time
        self.digests = InsertRows(ErrorDigest)
        self.digest_links: list[tuple[int, int | None, str, list]] = []  # line, entry seq, thread, row
        self.facts = InsertRows(Fact)
        self.fact_ids: dict[str, str] = {}  # exported id -> new id
        self.fact_links: list[tuple[int, str, str | None, list[int], list]] = []
        self.tombstones = InsertRows(FactTombstone)
        self.files = InsertRows(MemoryFile)
        self.versions = InsertRows(MemoryFileVersion)
        self.version_times: list[datetime] = []
        self.limits = files.FileLimits.from_settings()
        self.file_kinds: dict[str, tuple[int, bool]] = {}  # path -> line, whether a directory
        self.file_bytes = 0
        self.digest = ""

    def need_memory(self, kind: str) -> dict:
        if self.memory is None:
            raise InvalidRequest(f"A {kind} record comes before the memory record.")
        return self.memory

    def memory_record(self, record: dict) -> None:
        if self.memory is not None:
            raise InvalidRequest("The document holds more than one memory record.")
        self.memory = checked(record, MEMORY_RULES)
        self.memory_line = self.line

    def thread_record(self, record: dict) -> None:
        self.need_memory("thread")
        thread = checked(record, THREAD_RULES)
        name = thread["name"]
        if name == DEFAULT_THREAD:
            raise InvalidRequest(
                "thread.name: 'default' is the memory's own thread; its counters are the memory record's."
            )
        if name in self.threads:
            raise InvalidRequest(f"thread.name: the document holds thread {echo(name)!r} twice.")
        self.threads[name] = (self.line, thread)

    def use_thread(self, name: str, turn: int, kind: str) -> None:
        """A turn, entry or digest of thread `name`: its turn number counts in that thread."""
        self.thread_uses.setdefault(name, (self.line, kind))
        self.newest_turn[name] = max(self.newest_turn.get(name, 0), turn)

    def turn_record(self, record: dict) -> None:
        self.need_memory("turn")
        turn = checked(record, TURN_RULES)
        key = (turn["thread"], turn["number"])
        if key in self.turn_numbers:
            raise InvalidRequest(
                f"turn.number: the document holds turn {turn['number']} of thread {echo(key[0])!r} twice."
            )
        self.turn_numbers.add(key)
        self.use_thread(turn["thread"], turn["number"], "turn")
        self.turns.add(
            Turn(
                memory_id=self.memory_pk,
                **{name: turn[name] for name in TURN_FIELDS},
                created_at=turn["created_at"] or self.now,
                finished_at=turn["finished_at"],
            )
        )

    def entry_record(self, record: dict) -> None:
        self.need_memory("entry")
        entry = checked(record, ENTRY_RULES)
        seq, kind = entry["seq"], entry["kind"]
        if seq in self.entry_kinds:
            raise InvalidRequest(f"entry.seq: the document holds seq {seq} twice.")
        if kind == Entry.Kind.MESSAGE:
            _message_fields(entry)
        else:
            _other_fields(entry)
        thread, said = entry["thread"], entry["created_at"] or self.now
        self.entry_kinds[seq] = kind
        self.entry_threads[seq] = thread
        self.use_thread(thread, entry["turn"], "entry")
        self.newest_said[thread] = max(self.newest_said.get(thread, said), said)
        if kind == Entry.Kind.MESSAGE and entry["committed"]:
            self.messages += 1
            self.tokens += entry["tokens"]
            counts = self.thread_counts.setdefault(thread, [0, 0])
            counts[0] += 1
            counts[1] += entry["tokens"]
            self.indexed.append(seq)
        self.entries.add(
            Entry(memory_id=self.memory_pk, **{name: entry[name] for name in ENTRY_FIELDS}, created_at=said)
        )

    def digest_record(self, record: dict) -> None:
        self.need_memory("digest")
        digest = checked(record, DIGEST_RULES)
        row = self.digests.add(
            ErrorDigest(
                memory_id=self.memory_pk,
                project_id=self.project.pk,
                entry_id=None,  # given when the entries are written
                **{name: digest[name] for name in DIGEST_FIELDS},
                created_at=digest["created_at"] or self.now,
            )
        )
        self.use_thread(digest["thread"], digest["turn"], "digest")
        self.digest_links.append((self.line, digest["entry_seq"], digest["thread"], row))

    def fact_record(self, record: dict) -> None:
        self.need_memory("fact")
        fact = checked(record, FACT_RULES)
        if fact["id"] in self.fact_ids:
            raise InvalidRequest(f"fact.id: the document holds fact {echo(fact['id'])} twice.")
        text = fact["text"]
        made = Fact(
            memory_id=self.memory_pk,
            text=text,
            normalized=fact_normalize(text),
            slot=fact["slot"],
            extractor=fact["extractor"],
            confidence=fact["confidence"],
            active=fact["active"],
            tokens=fact_tokens(text),
            source_entry_ids=[],  # given when the entries are written
            superseded_by_id=None,  # given once every fact is read
            valid_from=fact["valid_from"],
            valid_to=fact["valid_to"],
            created_at=fact["created_at"] or self.now,
            updated_at=fact["updated_at"] or self.now,
        )
        self.fact_ids[fact["id"]] = made.pk
        row = self.facts.add(made)
        self.fact_links.append((self.line, fact["id"], fact["superseded_by"], fact["source_entry_seqs"], row))

    def tombstone_record(self, record: dict) -> None:
        self.need_memory("fact_tombstone")
        stone = checked(record, TOMBSTONE_RULES)
        self.tombstones.add(FactTombstone(memory_id=self.memory_pk, **stone, created_at=self.now))

    def file_record(self, record: dict) -> None:
        self.need_memory("file")
        node = checked(record, FILE_RULES)
        path, is_dir, content = node["path"], node["is_dir"], node["content"]
        if path in self.file_kinds:
            raise InvalidRequest(f"file {path}: the document holds this path twice.")
        if is_dir and content:
            raise InvalidRequest(f"file {path}: a directory holds no content.")
        size = len(content.encode("utf-8"))
        self.file_bytes += size
        self.file_kinds[path] = (self.line, is_dir)
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
        self.files.add(
            MemoryFile(
                memory_id=self.memory_pk,
                path=path,
                is_dir=is_dir,
                content=content,
                size=size,
                version=node["version"],
                changed_by=node["changed_by"],
                created_at=node["created_at"] or self.now,
                updated_at=node["updated_at"] or self.now,
            )
        )

    def file_version_record(self, record: dict) -> None:
        self.need_memory("file_version")
        kept = checked(record, FILE_VERSION_RULES)
        replaced_at = kept["replaced_at"] or self.now
        self.version_times.append(replaced_at)
        self.versions.add(
            MemoryFileVersion(
                memory_id=self.memory_pk,
                **{name: kept[name] for name in FILE_VERSION_FIELDS},
                size=len(kept["content"].encode("utf-8")),
                changed_at=kept["changed_at"],
                replaced_by=kept["replaced_by"],
                replaced_at=replaced_at,
            )
        )

    def finish(self) -> None:
        """The checks that need the whole document, each naming the line of the record it refuses;
        then the memory's own row, with its counts made from the rows."""
        memory = self.memory
        if memory is None:
            raise InvalidRequest("The document holds no memory record.")
        for path, (line, _is_dir) in self.file_kinds.items():
            folder = path.rpartition("/")[0]
            if folder and self.file_kinds.get(folder, (0, False))[1] is not True:
                raise refuse(line, f"file {path}: the document holds no directory {folder} for it.")
        for name, (line, kind) in self.thread_uses.items():
            if name != DEFAULT_THREAD and name not in self.threads:
                raise refuse(line, f"{kind}.thread: the document holds no thread record {echo(name)!r}.")
        linked: set[int] = set()
        for line, seq, thread, _row in self.digest_links:
            if seq is None:
                continue
            if self.entry_kinds.get(seq) != Entry.Kind.DIGEST or seq in linked:
                raise refuse(line, f"digest.entry_seq: {seq} is not a digest entry of the document's own.")
            if self.entry_threads[seq] != thread:
                raise refuse(line, f"digest.thread: not the thread of its entry {seq}.")
            linked.add(seq)
        superseded = self.facts.column("superseded_by")
        for line, old_id, newer, seqs, row in self.fact_links:
            if newer is not None:
                if newer not in self.fact_ids or newer == old_id:
                    raise refuse(line, "fact.superseded_by: names no other fact of the document.")
                row[superseded] = self.fact_ids[newer]
            if any(seq not in self.entry_kinds for seq in seqs):
                raise refuse(line, "fact.source_entry_seqs: names a seq the document holds no entry for.")
        self.keep_newest_versions()
        last_seq = memory["last_seq"]
        if last_seq < max(self.entry_kinds, default=0):
            raise refuse(self.memory_line, "memory.last_seq: lower than an entry's seq.")
        if memory["last_turn"] < self.newest_turn.get(DEFAULT_THREAD, 0):
            raise refuse(self.memory_line, "memory.last_turn: lower than a turn's or an entry's.")
        for name in ("turn_start_seq", "summary_upto_seq"):
            if memory[name] > last_seq:
                raise refuse(self.memory_line, f"memory.{name}: higher than memory.last_seq.")
        in_threads = [0, 0]  # what the named threads hold of the memory's messages and tokens
        for name, (line, thread) in self.threads.items():
            if thread["last_turn"] < self.newest_turn.get(name, 0):
                raise refuse(line, "thread.last_turn: lower than a turn's or an entry's of the thread.")
            for field in ("turn_start_seq", "summary_upto_seq"):
                if thread[field] > last_seq:
                    raise refuse(line, f"thread.{field}: higher than memory.last_seq.")
            messages, tokens = self.thread_counts.get(name, (0, 0))
            in_threads = [in_threads[0] + messages, in_threads[1] + tokens]
            created = thread["created_at"] or self.now
            self.thread_rows.add(
                Thread(
                    memory_id=self.memory_pk,
                    **{field: thread[field] for field in THREAD_FIELDS},
                    message_count=messages,
                    token_count=tokens,
                    created_at=created,
                    updated_at=thread["updated_at"] or self.newest_said.get(name, created),
                )
            )
        self.memories.add(
            Memory(
                id=self.memory_pk,
                project_id=self.project.pk,
                **{name: memory[name] for name in MEMORY_FIELDS if name not in COUNTS},
                message_count=self.messages,
                token_count=self.tokens,
                digest_count=len(self.digest_links),
                threads_message_count=in_threads[0],
                threads_token_count=in_threads[1],
                background_upto_seq=last_seq,  # nothing to index or extract again
                created_at=memory["created_at"] or self.now,
                updated_at=self.now,
                last_used_at=self.now,
            )
        )

    def keep_newest_versions(self) -> None:
        """The file versions this install keeps beside the document's files, as a change's pruning
        would leave them (`files.versions_kept`)."""
        size = self.versions.column("size")
        order = sorted(range(len(self.versions.rows)), key=lambda i: self.version_times[i], reverse=True)
        kept = files.versions_kept(
            [self.versions.rows[i][size] for i in order],
            room=self.limits.total_bytes - self.file_bytes,
            limits=self.limits,
        )
        keep = set(order[:kept])
        self.versions.rows = [row for i, row in enumerate(self.versions.rows) if i in keep]

    def write(self, cursor) -> list[int]:
        """Insert every row (call inside the write transaction); the ids of the committed messages."""
        self.memories.insert(cursor)
        self.thread_rows.insert(cursor)
        self.turns.insert(cursor)
        ids = {seq: pk for pk, seq in self.entries.insert(cursor, returning=("id", "seq"))}
        entry = self.digests.column("entry")
        for _line, seq, _thread, row in self.digest_links:
            row[entry] = ids[seq] if seq is not None else None
        sources, field = self.facts.column("source_entry_ids"), Fact._meta.get_field("source_entry_ids")
        for _line, _old, _newer, seqs, row in self.fact_links:
            row[sources] = field.get_db_prep_save([ids[seq] for seq in seqs], connection)
        for rows in (self.digests, self.facts, self.tombstones, self.files, self.versions):
            rows.insert(cursor)
        return [ids[seq] for seq in self.indexed]


def _message_fields(entry: dict) -> None:
    """A stored message's fields, checked as the API checks a message (common.messages), its text
    made from its parts as a write makes it."""
    parts = entry["parts"]
    message = validate_message(
        {
            "role": entry["role"],
            "content": parts if parts is not None else entry["content"],
            "name": entry["name"],
            "tool_calls": entry["tool_calls"],
            "tool_call_id": entry["tool_call_id"],
        },
        where="entry",
    )
    if message["role"] not in STORED_ROLES:
        raise InvalidRequest(
            "entry.role: a stored message is user, assistant or tool "
            "(a system message becomes the memory's instructions)."
        )
    if entry["key"] or entry["value"] is not None:
        raise InvalidRequest("entry.key: only a data entry has a key and a value.")
    entry.update(
        content=text_of(parts) if parts is not None else entry["content"],
        name=message.get("name", ""),
        tool_calls=message.get("tool_calls"),
        tool_call_id=message.get("tool_call_id", ""),
    )


def _other_fields(entry: dict) -> None:
    """A data, error, digest or action entry: none of a message's fields; a key and value on data only."""
    for name in ("role", "name", "tool_call_id"):
        if entry[name]:
            raise InvalidRequest(f"entry.{name}: only a message has one.")
    for name in ("parts", "tool_calls"):
        if entry[name] is not None:
            raise InvalidRequest(f"entry.{name}: only a message has them.")
    if entry["kind"] != Entry.Kind.DATA and (entry["key"] or entry["value"] is not None):
        raise InvalidRequest("entry.key: only a data entry has a key and a value.")


IMPORTERS: dict[str, Callable[[Document, dict], None]] = {
    "memory": Document.memory_record,
    "thread": Document.thread_record,
    "turn": Document.turn_record,
    "entry": Document.entry_record,
    "digest": Document.digest_record,
    "fact": Document.fact_record,
    "fact_tombstone": Document.tombstone_record,
    "file": Document.file_record,
    "file_version": Document.file_version_record,
}


def document_read(project: Project, lines: Iterable[bytes]) -> Document:
    """The whole document, read and checked (no database access): 400 naming the line and the field."""
    reader = Reader(lines)
    document = Document(project)
    records = iter(reader)
    first = next(records, None)
    if first is None:
        raise InvalidRequest("The document is empty.")
    header_check(first[1])
    for number, record in records:
        handler = IMPORTERS.get(record["type"])
        if handler is None:
            raise InvalidRequest(
                f"line {number}: Unknown record type {str(record['type'])[:40]!r}: the document was "
                "written by a newer or different Threadless.",
                hint="Upgrade this install.",
            )
        document.line = number
        try:
            handler(document, record)
        except InvalidRequest as refusal:
            raise InvalidRequest(f"line {number}: {refusal.message}", hint=refusal.hint) from None
        except (TypeError, ValueError, KeyError) as exc:  # a value no rule foresaw: the document's still
            raise refuse(number, f"a {record['type']} record that does not fit ({exc.__class__.__name__}).")
    document.digest = reader.check_end()
    document.finish()
    return document
