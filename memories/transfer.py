"""Export and import of one memory as a versioned JSON Lines document (docs/deployment.md,
"Export and import").

The document is one JSON object per line, each with a `type`:

    header          {"type": "header", "format": "threadless.memory", "version": 2, "exported_at", "source"}
    memory          the memory's own fields (metadata, instructions, policy, summary, counters:
                    the default thread's turn counters and summary are the memory's)
    thread          a named thread, by name (turn counters, rolling summary, times)
    turn            one per turn, with its thread (state, input, actions, task errors, timings)
    entry           one per entry, in seq order, with its thread (kind, role, content or parts,
                    tool calls, commit flag, tokens, created_at: when it was said)
    digest          an error digest, with its thread, tied to its entry by `entry_seq`
    fact            a fact with its provenance (`source_entry_seqs`), history (`superseded_by`)
                    and when it held (`valid_from`, `valid_to`)
    fact_tombstone  a statement a person removed (extraction must not bring it back)
    file            a memory file or directory under /memories, by path (content, version, who
                    changed it, times), in path order so a folder comes before what it holds
    file_version    a content a change replaced (kept for the console), deleted files' included
    end             {"type": "end", "records": n, "sha256": <hex of every line before it>}

Entries and facts refer to each other by sequence number and exported fact id, never by a
database id, so a document moves between installs. A new kind of record is a new `type` with an exporter and
an importer registered below; a reader refuses a type it does not know and a `version` newer than its own,
rather than drop part of a memory. Version 2 added threads (the `thread` record, `thread` on turns,
entries and digests) and facts' `valid_from`/`valid_to`; a version 1 document has none of them and
imports as it was exported, every row in the default thread.

Export streams: rows are read in chunks in seq order, so a memory of any size is written in
bounded memory. Import reads and checks the whole document first (each field by the API's rule
for it, the `end` record's count and digest, the links between records), with nothing written
and no lock taken, then writes it in one short transaction: a truncated, damaged, newer or
malformed document leaves nothing behind, and other writers wait for the write alone. An
imported memory counts against the plan's allowance like any other. Importing the same document
again into the same project returns the memory the first import made (keyed by the document's
digest).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any

import orjson
from django.db import IntegrityError, connection, models
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from common.db import write_atomic
from common.errors import Conflict, InvalidRequest
from common.http.body import MAX_JSON_DEPTH, json_depth, reject_unknown
from common.messages import cut_marker, stored_reply_limit, text_of, validate_message
from common.redaction import echo
from memories import embeddings, events, recall, services
from memories.facts.base import fact_normalize, fact_tokens
from memories.facts.store import IMPORTED
from memories.models import (
    DEFAULT_THREAD,
    Entry,
    ErrorDigest,
    Fact,
    FactTombstone,
    IdempotencyRecord,
    Memory,
    MemoryFile,
    MemoryFileVersion,
    Thread,
    Turn,
)
from memories.models import memory_id as new_memory_id
from memories.policy import policy_parse
from memories.services import files
from memories.services.outbox import outbox_enqueue
from projects.models import Project

FORMAT = "threadless.memory"
VERSION = 2
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
THREAD_FIELDS = ("name", "last_turn", "turn_start_seq", "summary", "summary_upto_seq", "last_budget_tokens")
THREAD_COUNTS = ("message_count", "token_count")
TURN_FIELDS = (
    "thread",
    "number",
    "state",
    "input",
    "actions",
    "task_errors",
    "output",
    "attempt",
    "duration_ms",
)
ENTRY_FIELDS = (
    "thread",
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
DIGEST_FIELDS = ("thread", "turn", "task_id", "task_type", "error_type", "agent_id", "text", "raw_error")
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
# (and its reader to IMPORTERS).
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


# --- import ------------------------------------------------------------------------------------
#
# An import reads and checks the whole document first, with no transaction open and no lock taken,
# building every row it makes as the parameters of its INSERT (`_Rows`). Only then does it write:
# one transaction of a few multi-row INSERTs, under the writers' lock on SQLite
# (common.db.write_atomic), so the other writers of the database wait for the write alone, never for
# the reading. Each field meets the rule the API holds it to, through the same functions where the
# API has one (external ids, metadata, policy, messages, fact texts, file paths); a refusal names
# the line and the field, and nothing is written. What every write derives (a memory's counts, a
# fact's normalised form and tokens) is derived again, never taken from the document; who wrote
# a fact or a file is the document's claim, stored behind the "imported:" mark (`_imported`).

INT_MAX = 2**31 - 1  # a PositiveIntegerField (PostgreSQL's integer)
BIG_MAX = 2**63 - 1  # a PositiveBigIntegerField (bigint)
MAX_PARAMS = 30_000  # parameters in one INSERT: within SQLite's 32,766 and PostgreSQL's 65,535
STORED_ROLES = ("user", "assistant", "tool")  # a system message becomes the memory's instructions
EXTRACTORS = ("api", "console", "rules", "llm")
FILE_COMMANDS = ("create", "str_replace", "insert", "delete", "rename")
COUNTS = ("message_count", "token_count", "digest_count")
_REQUIRED = object()


class _Unfit(Exception):
    """A value breaks its field's rule (the message says how; `_checked` names the field)."""


def _stored_text_limit() -> int:
    """The longest text a write stores: what one request body carries, or a model's reply cut to
    that with its marker line (common.messages.text_cut)."""
    limit = stored_reply_limit()
    return limit + len(cut_marker(limit)) + 2


def _integer(low: int, high: int) -> Callable[[Any], int]:
    def check(value):
        if type(value) is not int or not low <= value <= high:
            raise _Unfit(f"must be an integer from {low:,} to {high:,}.")
        return value

    return check


def _text(limit: int | Callable[[], int] | None) -> Callable[[Any], str]:
    """A string without NUL characters (PostgreSQL's text holds none), of at most `limit`
    characters (None: any length)."""

    def check(value):
        most = limit() if callable(limit) else limit
        if not isinstance(value, str) or "\x00" in value or (most is not None and len(value) > most):
            raise _Unfit(
                "must be a string without NUL characters"
                + (f", at most {most:,} characters." if most else ".")
            )
        return value

    return check


def _one_of(values: Iterable[str]) -> Callable[[Any], str]:
    allowed = tuple(values)

    def check(value):
        if not isinstance(value, str) or value not in allowed:
            raise _Unfit(f"must be one of {', '.join(allowed)}.")
        return value

    return check


def _list_of(test: Callable[[Any], bool], what: str) -> Callable[[Any], list]:
    def check(value):
        if not isinstance(value, list) or not all(test(item) for item in value):
            raise _Unfit(f"must be a list of {what}.")
        return value

    return check


def _nullable(rule: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else rule(value)


def _flag(value) -> bool:
    if not isinstance(value, bool):
        raise _Unfit("must be true or false.")
    return value


def _fraction(value) -> float:
    if type(value) not in (int, float) or not 0 <= value <= 1:
        raise _Unfit("must be a number from 0 to 1.")
    return float(value)


def _moment(value) -> datetime:
    parsed = None
    if isinstance(value, str):
        try:
            parsed = parse_datetime(value)
        except ValueError:  # well formed, but no such day or hour
            parsed = None
    if parsed is None or timezone.is_naive(parsed):
        raise _Unfit("must be an ISO 8601 time with its UTC offset.")
    return parsed


def _any(value):
    return value


def _is_seq(value) -> bool:
    return type(value) is int and 1 <= value <= BIG_MAX


def _imported(value: str) -> str:
    """A document's word for who wrote something, kept only behind the "imported:" mark: the
    console shows it as the document's claim, never as an actor of this install."""
    return value if not value or value.startswith(IMPORTED) else IMPORTED + value


def _actor(value) -> str:
    """Who wrote a file or its version: printable (the console shows it), at most 120 characters
    with its mark."""
    if not isinstance(value, str) or not value.isprintable() or len(_imported(value)) > 120:
        raise _Unfit(f"must be a string of at most {120 - len(IMPORTED)} printable characters.")
    return _imported(value)


def _extractor(value) -> str:
    if value not in EXTRACTORS and value not in [IMPORTED + e for e in EXTRACTORS]:
        raise _Unfit(f"must be one of {', '.join(EXTRACTORS)}.")
    return _imported(value)


def _path(kind: str) -> Callable[[Any], str]:
    """A path relative to /memories, refused unless the memory tool would have made it."""

    def check(path):
        try:
            relative = files.file_path(f"{files.ROOT}/{path}") if isinstance(path, str) else None
        except files.Refused as refusal:
            raise InvalidRequest(f"{kind}.path: {refusal}")
        if not relative or relative != path:
            raise InvalidRequest(
                f"{kind}.path: {str(path)[:80]!r} is not a path under /memories "
                "(relative, no empty, '.' or '..' parts)."
            )
        return relative

    return check


def _external_id(value) -> str | None:
    return None if value is None else services.external_id_check(value, field="memory.external_id")


def _metadata(value) -> dict:
    return services.metadata_check(value, field="memory.metadata")


def _policy(value) -> dict:
    return policy_parse(value, path="memory.policy").as_json()


def _fact_text(value) -> str:
    return services.fact_text_check(value, field="fact.text")


def _thread_name(value) -> str:
    return services.external_id_check(value, field="thread.name")


def _thread_of(kind: str) -> Callable[[Any], str]:
    """The thread a turn, entry or digest belongs to, by the API's rule for a thread id."""
    return lambda value: services.external_id_check(value, field=f"{kind}.thread")


# What each record may hold: field -> (its rule, its value when the record leaves it out). A rule
# returns the value to store or raises (_Unfit, or the API's own InvalidRequest naming the field).
Rules = dict[str, tuple[Callable[[Any], Any], Any]]
MEMORY_RULES: Rules = {
    "id": (_text(40), ""),
    "external_id": (_external_id, None),
    "metadata": (_metadata, None),
    "instructions": (_text(_stored_text_limit), ""),
    "policy": (_policy, None),
    "summary": (_text(_stored_text_limit), ""),
    "summary_upto_seq": (_integer(0, BIG_MAX), 0),
    "last_budget_tokens": (_integer(1, services.MAX_BUDGET), 60000),
    "last_seq": (_integer(0, BIG_MAX), 0),
    "last_turn": (_integer(0, INT_MAX), 0),
    "turn_start_seq": (_integer(0, BIG_MAX), 0),
    # COUNTS: made again from the document's rows, only checked here.
    "message_count": (_integer(0, INT_MAX), 0),
    "token_count": (_integer(0, BIG_MAX), 0),
    "digest_count": (_integer(0, INT_MAX), 0),
    "created_at": (_nullable(_moment), None),
}
THREAD_RULES: Rules = {
    "name": (_thread_name, _REQUIRED),
    "last_turn": (_integer(0, INT_MAX), 0),
    "turn_start_seq": (_integer(0, BIG_MAX), 0),
    "summary": (_text(_stored_text_limit), ""),
    "summary_upto_seq": (_integer(0, BIG_MAX), 0),
    "last_budget_tokens": (_integer(1, services.MAX_BUDGET), 60000),
    # THREAD_COUNTS: made again from the document's entries, only checked here.
    "message_count": (_integer(0, INT_MAX), 0),
    "token_count": (_integer(0, BIG_MAX), 0),
    "created_at": (_nullable(_moment), None),
    "updated_at": (_nullable(_moment), None),
}
TURN_RULES: Rules = {
    "thread": (_thread_of("turn"), DEFAULT_THREAD),
    "number": (_integer(1, INT_MAX), _REQUIRED),
    "state": (_one_of(Turn.State.values), Turn.State.READY),
    "input": (_text(_stored_text_limit), ""),
    "actions": (_list_of(lambda a: isinstance(a, str), "strings"), []),
    "task_errors": (_list_of(lambda e: isinstance(e, dict), "objects"), []),
    "output": (_list_of(lambda o: isinstance(o, dict), "objects"), []),
    "attempt": (_integer(0, INT_MAX), 1),
    "duration_ms": (_nullable(_integer(0, INT_MAX)), None),
    "created_at": (_nullable(_moment), None),
    "finished_at": (_nullable(_moment), None),
}
ENTRY_RULES: Rules = {
    "thread": (_thread_of("entry"), DEFAULT_THREAD),
    "seq": (_integer(1, BIG_MAX), _REQUIRED),
    "turn": (_integer(1, INT_MAX), _REQUIRED),
    "kind": (_one_of(Entry.Kind.values), _REQUIRED),
    "role": (_text(16), ""),  # a message's, by validate_message; no other kind has one
    "content": (_text(_stored_text_limit), ""),
    "parts": (_nullable(_list_of(_any, "parts")), None),
    "name": (_text(200), ""),
    "tool_calls": (_nullable(_list_of(lambda c: isinstance(c, dict), "objects")), None),
    "tool_call_id": (_text(200), ""),
    "task_id": (_text(200), ""),
    "key": (_text(200), ""),
    "value": (_any, None),
    "committed": (_flag, True),
    "tokens": (_integer(0, INT_MAX), 0),
    "created_at": (_nullable(_moment), None),
}
DIGEST_RULES: Rules = {
    "thread": (_thread_of("digest"), DEFAULT_THREAD),
    "turn": (_integer(1, INT_MAX), _REQUIRED),
    "task_id": (_text(200), _REQUIRED),
    "task_type": (_text(32), "reported"),
    "error_type": (_text(32), "unknown"),
    "agent_id": (_text(40), ""),
    "text": (_text(250), _REQUIRED),
    "raw_error": (_text(_stored_text_limit), ""),
    "entry_seq": (_nullable(_integer(1, BIG_MAX)), None),
    "created_at": (_nullable(_moment), None),
}
FACT_RULES: Rules = {
    "id": (_text(40), _REQUIRED),
    "text": (_fact_text, _REQUIRED),
    "normalized": (_text(500), ""),  # made again from the text
    "slot": (_text(100), ""),
    "extractor": (_extractor, "api"),
    "confidence": (_fraction, 1.0),
    "active": (_flag, True),
    "tokens": (_integer(0, INT_MAX), 0),  # counted again from the text
    "superseded_by": (_nullable(_text(40)), None),
    "source_entry_seqs": (_list_of(_is_seq, "seqs"), []),
    "valid_from": (_nullable(_moment), None),
    "valid_to": (_nullable(_moment), None),
    "created_at": (_nullable(_moment), None),
    "updated_at": (_nullable(_moment), None),
}
TOMBSTONE_RULES: Rules = {
    "normalized": (_text(500), _REQUIRED),
    "slot": (_text(100), ""),
    "upto_seq": (_integer(0, BIG_MAX), 0),
}
FILE_RULES: Rules = {
    "path": (_path("file"), _REQUIRED),
    "is_dir": (_flag, False),
    "content": (_text(None), ""),  # sizes: the install's file limits, checked on the whole folder
    "version": (_integer(1, INT_MAX), 1),
    "changed_by": (_actor, ""),
    "created_at": (_nullable(_moment), None),
    "updated_at": (_nullable(_moment), None),
}
FILE_VERSION_RULES: Rules = {
    "path": (_path("file_version"), _REQUIRED),
    "version": (_integer(1, INT_MAX), 1),
    "content": (_text(None), ""),
    "changed_by": (_actor, ""),
    "changed_at": (_moment, _REQUIRED),
    "command": (_one_of(FILE_COMMANDS), _REQUIRED),
    "replaced_by": (_actor, ""),
    "replaced_at": (_nullable(_moment), None),
}
HEADER_FIELDS = frozenset({"type", "format", "version", "exported_at", "source"})


def _checked(record: dict, rules: Rules) -> dict:
    """The record's fields, each through its rule (a left-out one through its default's); a field
    the rules do not name is refused, as the API refuses one."""
    kind = record["type"]
    reject_unknown(record, {"type", *rules}, kind)
    out = {}
    for name, (rule, default) in rules.items():
        if name not in record and default is _REQUIRED:
            raise InvalidRequest(f"{kind}.{name}: required.")
        try:
            out[name] = rule(record.get(name, default))
        except _Unfit as unfit:
            raise InvalidRequest(f"{kind}.{name}: {unfit}") from None
    return out


class _Reader:
    """The document's records with their line numbers, one at a time, with the running digest and
    count the `end` record is checked against."""

    def __init__(self, lines: Iterable[bytes]) -> None:
        self.lines = iter(lines)
        self.digest = hashlib.sha256()
        self.count = 0
        self.end: dict | None = None

    def __iter__(self) -> Iterator[tuple[int, dict]]:
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
            if json_depth(record) > MAX_JSON_DEPTH:
                # as deep as an API body may nest: deeper values break what walks them later
                raise InvalidRequest(f"line {number}: nested deeper than {MAX_JSON_DEPTH} levels.")
            if record["type"] == "end":
                self.end = record
                continue
            line = raw if raw.endswith(b"\n") else raw + b"\n"
            self.digest.update(line)
            self.count += 1
            yield number, record

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
    reject_unknown(record, HEADER_FIELDS, "line 1: header")
    version = record.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InvalidRequest("line 1: header.version: must be a positive integer.")
    if version > VERSION:
        raise InvalidRequest(
            f"The document is format version {version}, newer than this install reads (up to {VERSION}).",
            hint="Upgrade this Threadless install, then import again.",
        )


def _refuse(line: int, message: str) -> InvalidRequest:
    return InvalidRequest(f"line {line}: {message}")


class _Rows:
    """New rows of one table, each kept as its INSERT's parameters, prepared as Django prepares a
    save's (but without auto_now: a row keeps the times it was given), so the write only sends them.
    Every column but an automatic id is sent, those with a database default (`thread`) included."""

    def __init__(self, model: type[models.Model]) -> None:
        self.model = model
        self.fields = [f for f in model._meta.concrete_fields if f is not model._meta.auto_field]
        self.rows: list[list] = []

    def add(self, obj: models.Model) -> list:
        row = [f.get_db_prep_save(getattr(obj, f.attname), connection) for f in self.fields]
        self.rows.append(row)
        return row

    def column(self, name: str) -> int:
        return next(i for i, f in enumerate(self.fields) if f.name == name)

    def insert(self, cursor, returning: tuple[str, ...] = ()) -> list[tuple]:
        """Write the rows, as many to a statement as MAX_PARAMS allows; the `returning` columns of each."""
        q = connection.ops.quote_name
        columns = ", ".join(q(f.column) for f in self.fields)
        head = f"INSERT INTO {q(self.model._meta.db_table)} ({columns}) VALUES "
        marks = "(" + ", ".join(["%s"] * len(self.fields)) + ")"
        tail = f" RETURNING {', '.join(q(c) for c in returning)}" if returning else ""
        per = max(1, MAX_PARAMS // len(self.fields))
        made: list[tuple] = []
        for start in range(0, len(self.rows), per):
            chunk = self.rows[start : start + per]
            cursor.execute(head + ", ".join([marks] * len(chunk)) + tail, [p for row in chunk for p in row])
            if returning:
                made += cursor.fetchall()
        return made


class _Document:
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
        self.memories = _Rows(Memory)
        self.threads: dict[str, tuple[int, dict]] = {}  # name -> line, the thread record's fields
        self.thread_rows = _Rows(Thread)
        self.thread_uses: dict[str, tuple[int, str]] = {}  # name -> the first line and record naming it
        self.turns = _Rows(Turn)
        self.turn_numbers: set[tuple[str, int]] = set()  # (thread, number)
        self.entries = _Rows(Entry)
        self.entry_kinds: dict[int, str] = {}  # seq -> kind
        self.entry_threads: dict[int, str] = {}  # seq -> thread
        self.indexed: list[int] = []  # the seqs of committed messages (the recall index's)
        self.messages = self.tokens = 0
        self.thread_counts: dict[str, list[int]] = {}  # thread -> [messages, tokens]
        self.newest_turn: dict[str, int] = {}  # thread -> its highest turn number
        self.newest_said: dict[str, datetime] = {}  # thread -> its newest entry's time
        self.digests = _Rows(ErrorDigest)
        self.digest_links: list[tuple[int, int | None, str, list]] = []  # line, entry seq, thread, row
        self.facts = _Rows(Fact)
        self.fact_ids: dict[str, str] = {}  # exported id -> new id
        self.fact_links: list[tuple[int, str, str | None, list[int], list]] = []
        self.tombstones = _Rows(FactTombstone)
        self.files = _Rows(MemoryFile)
        self.versions = _Rows(MemoryFileVersion)
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
        self.memory = _checked(record, MEMORY_RULES)
        self.memory_line = self.line

    def thread_record(self, record: dict) -> None:
        self.need_memory("thread")
        thread = _checked(record, THREAD_RULES)
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
        turn = _checked(record, TURN_RULES)
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
        entry = _checked(record, ENTRY_RULES)
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
        digest = _checked(record, DIGEST_RULES)
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
        fact = _checked(record, FACT_RULES)
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
        stone = _checked(record, TOMBSTONE_RULES)
        self.tombstones.add(FactTombstone(memory_id=self.memory_pk, **stone, created_at=self.now))

    def file_record(self, record: dict) -> None:
        self.need_memory("file")
        node = _checked(record, FILE_RULES)
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
        kept = _checked(record, FILE_VERSION_RULES)
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
                raise _refuse(line, f"file {path}: the document holds no directory {folder} for it.")
        for name, (line, kind) in self.thread_uses.items():
            if name != DEFAULT_THREAD and name not in self.threads:
                raise _refuse(line, f"{kind}.thread: the document holds no thread record {echo(name)!r}.")
        linked: set[int] = set()
        for line, seq, thread, _row in self.digest_links:
            if seq is None:
                continue
            if self.entry_kinds.get(seq) != Entry.Kind.DIGEST or seq in linked:
                raise _refuse(line, f"digest.entry_seq: {seq} is not a digest entry of the document's own.")
            if self.entry_threads[seq] != thread:
                raise _refuse(line, f"digest.thread: not the thread of its entry {seq}.")
            linked.add(seq)
        superseded = self.facts.column("superseded_by")
        for line, old_id, newer, seqs, row in self.fact_links:
            if newer is not None:
                if newer not in self.fact_ids or newer == old_id:
                    raise _refuse(line, "fact.superseded_by: names no other fact of the document.")
                row[superseded] = self.fact_ids[newer]
            if any(seq not in self.entry_kinds for seq in seqs):
                raise _refuse(line, "fact.source_entry_seqs: names a seq the document holds no entry for.")
        self.keep_newest_versions()
        last_seq = memory["last_seq"]
        if last_seq < max(self.entry_kinds, default=0):
            raise _refuse(self.memory_line, "memory.last_seq: lower than an entry's seq.")
        if memory["last_turn"] < self.newest_turn.get(DEFAULT_THREAD, 0):
            raise _refuse(self.memory_line, "memory.last_turn: lower than a turn's or an entry's.")
        for name in ("turn_start_seq", "summary_upto_seq"):
            if memory[name] > last_seq:
                raise _refuse(self.memory_line, f"memory.{name}: higher than memory.last_seq.")
        in_threads = [0, 0]  # what the named threads hold of the memory's messages and tokens
        for name, (line, thread) in self.threads.items():
            if thread["last_turn"] < self.newest_turn.get(name, 0):
                raise _refuse(line, "thread.last_turn: lower than a turn's or an entry's of the thread.")
            for field in ("turn_start_seq", "summary_upto_seq"):
                if thread[field] > last_seq:
                    raise _refuse(line, f"thread.{field}: higher than memory.last_seq.")
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


IMPORTERS: dict[str, Callable[[_Document, dict], None]] = {
    "memory": _Document.memory_record,
    "thread": _Document.thread_record,
    "turn": _Document.turn_record,
    "entry": _Document.entry_record,
    "digest": _Document.digest_record,
    "fact": _Document.fact_record,
    "fact_tombstone": _Document.tombstone_record,
    "file": _Document.file_record,
    "file_version": _Document.file_version_record,
}


def _read(project: Project, lines: Iterable[bytes]) -> _Document:
    """The whole document, read and checked (no database access): 400 naming the line and the field."""
    reader = _Reader(lines)
    document = _Document(project)
    records = iter(reader)
    first = next(records, None)
    if first is None:
        raise InvalidRequest("The document is empty.")
    _check_header(first[1])
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
            raise _refuse(number, f"a {record['type']} record that does not fit ({exc.__class__.__name__}).")
    document.digest = reader.check_end()
    document.finish()
    return document


def _previous_import(project: Project, digest: str) -> Memory | None:
    record = IdempotencyRecord.objects.filter(project=project, scope=IMPORT_SCOPE, key=digest).first()
    if record is None:
        return None
    return Memory.objects.filter(project=project, pk=bytes(record.body).decode()).first()


def _taken(project: Project, external_id: str | None) -> bool:
    return (
        external_id is not None and Memory.objects.filter(project=project, external_id=external_id).exists()
    )


def _external_id_conflict() -> Conflict:
    return Conflict(
        "A memory with this external_id already exists in the project.",
        hint="Delete that memory first, or import into another project.",
    )


def memory_import(*, project: Project, lines: Iterable[bytes]) -> tuple[Memory, bool]:
    """Bring an exported document into `project` as a new memory, all or nothing: (memory,
    created). The same document imported again answers the memory its first import made. A new
    memory counts against the plan's allowance, as one made by the API does (429)."""
    document = _read(project, lines)
    earlier = _previous_import(project, document.digest)
    if earlier is not None:
        return earlier, False
    external_id = document.memory["external_id"]
    try:
        with write_atomic():
            # Again inside the write: another import may have committed since the reads above.
            earlier = _previous_import(project, document.digest)
            if earlier is not None:
                return earlier, False
            if _taken(project, external_id):
                raise _external_id_conflict()
            services.memory_allowance_check(project=project)
            with connection.cursor() as cursor:
                indexed = document.write(cursor)
            mark = {"project": project, "scope": IMPORT_SCOPE, "key": document.digest}
            IdempotencyRecord.objects.filter(**mark).delete()  # an earlier import whose memory is gone
            IdempotencyRecord.objects.create(**mark, status=201, body=document.memory_pk.encode())
            for start in range(0, len(indexed), CHUNK):
                recall.index_entries(memory_id=document.memory_pk, entry_ids=indexed[start : start + CHUNK])
            if embeddings.enabled(project):
                # The imported messages' vectors, made by the worker in bounded chunks (vectors jobs,
                # each taking its turn with other projects' work): until then decorate answers as a
                # memory without vectors would.
                outbox_enqueue(
                    memory_id=document.memory_pk, project_id=project.id, kind="vectors", payload={}
                )
            events.import_completed(Memory.objects.get(pk=document.memory_pk), {"source": "document"})
    except IntegrityError:
        # PostgreSQL, where imports write side by side: another one committed this document, or a
        # memory with this external id, first.
        earlier = _previous_import(project, document.digest)
        if earlier is not None:
            return earlier, False
        if _taken(project, external_id):
            raise _external_id_conflict()
        raise
    return Memory.objects.get(pk=document.memory_pk), True
