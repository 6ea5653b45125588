"""Export and import (memories.transfer): GET /v1/memories/{id}/export, POST /v1/memories/import and
the export_memories / import_memories commands. An imported memory gives the same decorate answer
and the same counts; a damaged, truncated or newer document is refused with nothing written."""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
from pathlib import Path

import orjson
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.urls import reverse

from common.writelock import writer_lock
from memories import embeddings, selectors, services, transfer
from memories.models import (
    Entry,
    ErrorDigest,
    Fact,
    FactTombstone,
    Memory,
    MemoryFile,
    MemoryFileVersion,
    Outbox,
    RecallVector,
    Thread,
    Turn,
)
from memories.transfer import memory_export
from tests.fixtures.api import decorate, error_of, post, report

NDJSON = "application/x-ndjson"


def build(cast, memory) -> None:
    """A memory with a bit of everything: turns, tool calls, a failure digest, an uncommitted raw
    error, extracted facts, a person's edit (a tombstone) and a superseded fact."""
    services.memory_update(
        memory=memory, policy={"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}}
    )
    decorate(
        cast.a,
        memory.id,
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi, I'm Dana. I live in Lisbon."},
        ],
    )
    report(
        cast.a,
        memory.id,
        [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
            {"role": "assistant", "content": "Sunny in Lisbon today."},
        ],
        failures=[{"task_id": "crm.lookup", "error": "ConnectException: refused"}],
    )
    decorate(cast.a, memory.id, [{"role": "user", "content": "Actually I live in Porto now. I like tea."}])
    report(cast.a, memory.id, [{"role": "assistant", "content": "Porto it is."}])
    for row in Outbox.objects.filter(memory=memory, processed_at=None):
        services.outbox_process(outbox_id=row.id)
    fact = services.fact_create(memory=memory, text="Prefers short answers")[0]
    services.fact_update(fact=fact, text="Prefers very short answers")
    for body in FILE_COMMANDS:
        result = file_command(cast.a, memory.id, body)
        assert not result["is_error"], (body, result)


# Memory files through the memory tool's commands: a directory tree, a file edited twice (two
# kept versions), a renamed one, a deleted one (its last content stays as a version) and a hidden one.
FILE_COMMANDS = [
    {"command": "create", "path": "/memories/notes.md", "file_text": "Likes coffee\nLives in Lisbon\n"},
    {"command": "str_replace", "path": "/memories/notes.md", "old_str": "Lisbon", "new_str": "Porto"},
    {"command": "insert", "path": "/memories/notes.md", "insert_line": 0, "insert_text": "# Dana"},
    {"command": "create", "path": "/memories/projects/alpha/plan.md", "file_text": "step 1\nstep 2\n"},
    {"command": "create", "path": "/memories/projects/empty/.keep", "file_text": ""},
    {"command": "create", "path": "/memories/scratch.txt", "file_text": "to be deleted — ünïcode"},
    {"command": "delete", "path": "/memories/scratch.txt"},
    {"command": "create", "path": "/memories/draft.md", "file_text": "moved"},
    {"command": "rename", "old_path": "/memories/draft.md", "new_path": "/memories/archive/final.md"},
]
FILE_VIEWS = [
    "/memories",
    "/memories/notes.md",
    "/memories/projects",
    "/memories/projects/alpha/plan.md",
    "/memories/projects/empty/.keep",
    "/memories/archive/final.md",
    "/memories/scratch.txt",
]


def file_command(client, memory_id: str, body: dict) -> dict:
    response = post(client, f"/v1/memories/{memory_id}/files/command", body)
    assert response.status_code == 200, response.content
    return response.json()


def views(client, memory_id: str) -> list[dict]:
    return [file_command(client, memory_id, {"command": "view", "path": path}) for path in FILE_VIEWS]


def export_of(client, memory_id: str) -> bytes:
    response = client.get(f"/v1/memories/{memory_id}/export")
    assert response.status_code == 200
    assert response["Content-Type"] == NDJSON
    return b"".join(response.streaming_content)


def import_(client, body: bytes):
    return client.post("/v1/memories/import", body, content_type=NDJSON)


def same_answer(answer: dict) -> dict:
    """A decorate answer without what differs by install: the memory's, entries' and facts' ids."""
    text = json.dumps(answer, sort_keys=True)
    answer = json.loads(text.replace(answer["memory_id"], "MEM"))
    for hit in answer["context"]["recalled"]:
        hit.pop("entry_id", None)
    for fact in answer["context"]["facts"]:
        fact.pop("id", None)
    return answer


def probe(cast, client, memory_id: str) -> dict:
    response = decorate(
        client, memory_id, [{"role": "user", "content": "Where do I live, Lisbon or Porto?"}], store=False
    )
    assert response.status_code == 200, response.content
    return same_answer(response.json())


def snapshot(memory: Memory) -> dict:
    entries = list(
        Entry.objects.filter(memory=memory)
        .order_by("seq")
        .values(
            "thread",
            "seq",
            "turn",
            "kind",
            "role",
            "content",
            "parts",
            "tool_calls",
            "tool_call_id",
            "task_id",
            "committed",
            "tokens",
            "created_at",
        )
    )
    facts = sorted(
        (
            f.text,
            f.active,
            f.extractor,
            f.slot,
            f.superseded_by.text if f.superseded_by else None,
            tuple(Entry.objects.get(pk=i).seq for i in f.source_entry_ids),
            f.valid_from,
            f.valid_to,
            f.created_at,
        )
        for f in Fact.objects.filter(memory=memory).select_related("superseded_by")
    )
    return {
        "entries": entries,
        "facts": facts,
        "threads": list(
            Thread.objects.filter(memory=memory)
            .order_by("name")
            .values(
                "name",
                "last_turn",
                "turn_start_seq",
                "summary",
                "message_count",
                "token_count",
                "created_at",
                "updated_at",
            )
        ),
        "turns": list(
            Turn.objects.filter(memory=memory)
            .order_by("thread", "number")
            .values_list("thread", "number", "state", "created_at")
        ),
        "digests": list(
            ErrorDigest.objects.filter(memory=memory).values_list("thread", "task_id", "text", "entry__seq")
        ),
        "tombstones": list(FactTombstone.objects.filter(memory=memory).values_list("normalized", "upto_seq")),
        "files": list(
            MemoryFile.objects.filter(memory=memory)
            .order_by("path")
            .values("path", "is_dir", "content", "size", "version", "changed_by", "created_at", "updated_at")
        ),
        "file_versions": list(
            MemoryFileVersion.objects.filter(memory=memory)
            .order_by("path", "version")
            .values(
                "path",
                "version",
                "content",
                "size",
                "changed_by",
                "changed_at",
                "command",
                "replaced_by",
                "replaced_at",
            )
        ),
        "counters": Memory.objects.filter(pk=memory.pk)
        .values(
            "message_count",
            "token_count",
            "digest_count",
            "threads_message_count",
            "threads_token_count",
            "last_seq",
            "last_turn",
            "instructions",
            "policy",
            "metadata",
            "summary",
            "created_at",
        )
        .get(),
    }


def marked(who: str) -> str:
    """Who wrote a fact or a file as an import stores the document's word for it."""
    return f"imported:{who}" if who else who


def as_imported(shot: dict) -> dict:
    """A snapshot as its memory's import stores it: who wrote each fact and file behind the mark."""
    return {
        **shot,
        "facts": sorted((text, active, marked(by), *rest) for text, active, by, *rest in shot["facts"]),
        "files": [{**f, "changed_by": marked(f["changed_by"])} for f in shot["files"]],
        "file_versions": [
            {**v, "changed_by": marked(v["changed_by"]), "replaced_by": marked(v["replaced_by"])}
            for v in shot["file_versions"]
        ],
    }


def written() -> tuple[int, ...]:
    return (
        Memory.objects.count(),
        Entry.objects.count(),
        Fact.objects.count(),
        Turn.objects.count(),
        ErrorDigest.objects.count(),
        FactTombstone.objects.count(),
        MemoryFile.objects.count(),
        MemoryFileVersion.objects.count(),
    )


def test_an_exported_memory_imported_elsewhere_gives_the_same_decorate_answer_and_counts(cast, memory_a):
    build(cast, memory_a)
    assert Fact.objects.filter(memory=memory_a, superseded_by__isnull=False).exists()
    assert FactTombstone.objects.filter(memory=memory_a).exists()
    document = export_of(cast.a, memory_a.id)
    records = [orjson.loads(line) for line in document.splitlines()]
    assert (
        records[0]["type"] == "header"
        and records[0]["version"] == transfer.VERSION
        and records[-1]["type"] == "end"
    )
    assert {"memory", "turn", "entry", "digest", "fact", "fact_tombstone", "file", "file_version"} <= {
        r["type"] for r in records
    }

    response = import_(cast.b, document)
    assert response.status_code == 201, response.content
    copy = Memory.objects.get(pk=response.json()["id"])
    assert copy.project_id == cast.project_b.id and copy.id != memory_a.id
    assert response.json()["counts"] == cast.a.get(f"/v1/memories/{memory_a.id}").json()["counts"]
    assert snapshot(copy) == as_imported(snapshot(memory_a))
    assert probe(cast, cast.b, copy.id) == probe(cast, cast.a, memory_a.id)
    assert probe(cast, cast.b, copy.id)["context"]["facts"]  # the comparison is not of two empty answers
    assert not Outbox.objects.filter(memory=copy).exists()  # nothing to extract again


# Two conversations of one subject, imported with their own times (SPEC 4.11): the second, a month
# later, supersedes a fact the first taught.
THREADED_HISTORY = {
    "trip-planning": [
        {
            "role": "user",
            "content": "Hi, I'm Dana. I live in Lisbon.",
            "created_at": "2025-03-01T09:30:00+00:00",
        },
        {"role": "assistant", "content": "Hello Dana!", "created_at": "2025-03-01T09:31:00+00:00"},
        {"role": "user", "content": "Find me a hotel in Rome.", "created_at": "2025-03-01T09:32:00+00:00"},
    ],
    "ticket-981": [
        {
            "role": "user",
            "content": "Actually I live in Porto now.",
            "created_at": "2025-04-02T10:00:00+00:00",
        },
        {"role": "assistant", "content": "Noted, Porto.", "created_at": "2025-04-02T10:01:00+00:00"},
    ],
}


def threads_of(client, memory_id: str) -> list[dict]:
    response = client.get(f"/v1/memories/{memory_id}/threads")
    assert response.status_code == 200, response.content
    return response.json()["data"]


def test_named_threads_and_message_times_come_back_from_an_export(cast, memory_a):
    for thread, messages in THREADED_HISTORY.items():
        response = post(
            cast.a, f"/v1/memories/{memory_a.id}/messages", {"thread": thread, "messages": messages}
        )
        assert response.status_code == 202, response.content
    decorate(cast.a, memory_a.id, [{"role": "user", "content": "And today?"}])
    for row in Outbox.objects.filter(memory=memory_a, processed_at=None):
        services.outbox_process(outbox_id=row.id)
    lisbon = Fact.objects.get(memory=memory_a, text="User lives in Lisbon")
    assert lisbon.valid_from.isoformat() == "2025-03-01T09:30:00+00:00"
    assert lisbon.valid_to.isoformat() == "2025-04-02T10:00:00+00:00"

    document = export_of(cast.a, memory_a.id)
    records = [orjson.loads(line) for line in document.splitlines()]
    assert [r["name"] for r in records if r["type"] == "thread"] == ["trip-planning", "ticket-981"]
    response = import_(cast.b, document)
    assert response.status_code == 201, response.content
    copy = Memory.objects.get(pk=response.json()["id"])
    shot = snapshot(copy)
    assert shot == as_imported(snapshot(memory_a))
    assert {(t, n) for t, n, *_ in shot["turns"]} == {
        ("default", 1),
        ("trip-planning", 1),
        ("trip-planning", 2),
        ("ticket-981", 1),
    }
    assert shot["entries"][0]["created_at"].isoformat() == "2025-03-01T09:30:00+00:00"
    assert threads_of(cast.b, copy.id) == threads_of(cast.a, memory_a.id)
    assert len(threads_of(cast.b, copy.id)) == 3
    in_thread = {"thread": "trip-planning", "store": False}
    ask = [{"role": "user", "content": "Which hotel?"}]
    assert same_answer(decorate(cast.b, copy.id, ask, **in_thread).json()) == same_answer(
        decorate(cast.a, memory_a.id, ask, **in_thread).json()
    )


def test_a_document_of_the_format_before_threads_imports_into_the_default_thread(cast):
    document = (Path(__file__).parents[1] / "data" / "memory_export_v1.jsonl").read_bytes()
    records = [orjson.loads(line) for line in document.splitlines()]
    assert records[0]["version"] == 1 and not any("thread" in r for r in records)
    response = import_(cast.b, document)
    assert response.status_code == 201, response.content
    copy = Memory.objects.get(pk=response.json()["id"])
    assert set(Entry.objects.filter(memory=copy).values_list("thread", flat=True)) == {"default"}
    assert set(Turn.objects.filter(memory=copy).values_list("thread", flat=True)) == {"default"}
    assert not Thread.objects.filter(memory=copy).exists()
    [default] = threads_of(cast.b, copy.id)
    assert (default["id"], default["turns"], default["messages"]) == ("default", 2, 6)
    said = [r["created_at"] for r in records if r["type"] == "entry"]
    assert [
        e.isoformat()
        for e in Entry.objects.filter(memory=copy).order_by("seq").values_list("created_at", flat=True)
    ] == said
    answer = decorate(cast.b, copy.id, [{"role": "user", "content": "Where do I live?"}], store=False).json()
    assert "User lives in Porto" in [f["text"] for f in answer["context"]["facts"]]


@pytest.mark.skipif(not embeddings.available_local(), reason="the local model is not installed")
def test_an_imported_memory_gets_its_messages_vectors_and_so_the_same_answer_by_meaning(
    cast, memory_a, settings, django_capture_on_commit_callbacks, eager_celery
):
    settings.THREADLESS_EMBEDDINGS = "local"  # the shipped default: facts are ordered by meaning too
    build(cast, memory_a)
    vectors = RecallVector.objects.filter(memory=memory_a)
    assert vectors.exists()
    document = export_of(cast.a, memory_a.id)
    with django_capture_on_commit_callbacks(execute=True):
        response = import_(cast.b, document)
    assert response.status_code == 201, response.content
    copy = Memory.objects.get(pk=response.json()["id"])
    assert RecallVector.objects.filter(memory=copy).count() == vectors.count()
    assert probe(cast, cast.b, copy.id) == probe(cast, cast.a, memory_a.id)


def test_an_imported_memory_shows_the_same_files_and_versions_through_the_memory_tool(cast, memory_a):
    build(cast, memory_a)
    original = snapshot(memory_a)
    assert {"projects", "projects/alpha", "projects/empty", "archive"} <= {
        f["path"] for f in original["files"] if f["is_dir"]
    }
    assert [v["command"] for v in original["file_versions"] if v["path"] == "notes.md"] == [
        "str_replace",
        "insert",
    ]
    assert [v["content"] for v in original["file_versions"] if v["path"] == "scratch.txt"] == [
        "to be deleted — ünïcode"
    ]
    assert not MemoryFile.objects.filter(memory=memory_a, path="scratch.txt").exists()

    copy_id = import_(cast.b, export_of(cast.a, memory_a.id)).json()["id"]
    copied, original = snapshot(Memory.objects.get(pk=copy_id)), as_imported(original)
    assert copied["files"] == original["files"] and copied["file_versions"] == original["file_versions"]
    assert views(cast.b, copy_id) == views(cast.a, memory_a.id)
    assert "Porto" in views(cast.b, copy_id)[1]["result"] and views(cast.b, copy_id)[-1]["is_error"]
    assert (
        history(Memory.objects.get(pk=copy_id))
        == {  # the console's history of each file
            path: [(*v[:3], marked(v[3]), *v[4:]) for v in versions]
            for path, versions in history(memory_a).items()
        }
    )
    # the copy is a working folder: the next edit keeps the imported content as its version
    assert not file_command(
        cast.b,
        copy_id,
        {"command": "str_replace", "path": "/memories/notes.md", "old_str": "Porto", "new_str": "Braga"},
    )["is_error"]
    assert (
        MemoryFileVersion.objects.filter(memory_id=copy_id, path="notes.md")
        .order_by("-version")
        .first()
        .version
        == 3
    )


def history(memory: Memory) -> dict:
    return {
        path: [(v.version, v.content, v.command, v.changed_by, v.changed_at, v.replaced_at) for v in versions]
        for path, versions in selectors.file_versions(memory=memory).items()
    }


def resealed(lines: list[bytes]) -> bytes:
    """Lines (without their end record) with a correct end record: only the content is wrong."""
    end = {"type": "end", "records": len(lines), "sha256": hashlib.sha256(b"".join(lines)).hexdigest()}
    return b"".join(lines) + orjson.dumps(end) + b"\n"


def with_file_record(document: bytes, change) -> bytes:
    lines = document.splitlines(keepends=True)[:-1]
    for i, line in enumerate(lines):
        record = orjson.loads(line)
        if record["type"] == "file" and record["path"] == "notes.md":
            lines[i] = orjson.dumps(change(record)) + b"\n"
    return resealed(lines)


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda r: {**r, "path": "../etc/passwd"}, "escape /memories"),
        (lambda r: {**r, "path": "a//b.md"}, "not a path under /memories"),
        (lambda r: {**r, "path": "nowhere/notes.md"}, "no directory nowhere"),
        (lambda r: {**r, "content": "nul\x00byte"}, "NUL"),
        (lambda r: {**r, "is_dir": "yes"}, "is_dir"),
        (lambda r: {**r, "version": 0}, "version"),
    ],
)
def test_a_file_record_the_memory_tool_could_not_have_written_is_refused_with_nothing_written(
    cast, memory_a, change, says
):
    build(cast, memory_a)
    document = with_file_record(export_of(cast.a, memory_a.id), change)
    before = written()
    assert says in error_of(import_(cast.b, document), 400, "invalid_request")["message"]
    assert written() == before


# A small document written by hand, one record of each type, each on a line of its own.
T0 = "2026-01-02T03:04:05+00:00"
SMALL = [
    {"type": "header", "format": "threadless.memory", "version": 2, "exported_at": T0, "source": {}},
    {
        "type": "memory",
        "id": "mem_x",
        "external_id": "user-7",
        "metadata": {"plan": "pro"},
        "last_seq": 3,
        "last_turn": 1,
        "turn_start_seq": 1,
        "created_at": T0,
    },
    {"type": "thread", "name": "ticket-981", "created_at": T0},
    {
        "type": "turn",
        "number": 1,
        "state": "ENDED",
        "input": "Hi",
        "actions": ["task_failed_crm"],
        "created_at": T0,
    },
    {
        "type": "entry",
        "seq": 1,
        "turn": 1,
        "kind": "message",
        "role": "user",
        "content": "I live in Porto.",
        "tokens": 7,
        "created_at": T0,
    },
    {
        "type": "entry",
        "seq": 2,
        "turn": 1,
        "kind": "message",
        "role": "assistant",
        "content": "",
        "parts": [{"type": "text", "text": "Noted."}],
        "tokens": 5,
        "created_at": T0,
    },
    {
        "type": "entry",
        "seq": 3,
        "turn": 1,
        "kind": "digest",
        "task_id": "crm",
        "content": "crm failed",
        "tokens": 3,
        "created_at": T0,
    },
    {"type": "digest", "turn": 1, "task_id": "crm", "text": "crm failed", "entry_seq": 3, "created_at": T0},
    {
        "type": "fact",
        "id": "f1",
        "text": "Lives in Porto",
        "extractor": "rules",
        "confidence": 0.9,
        "source_entry_seqs": [1],
        "created_at": T0,
        "updated_at": T0,
    },
    {"type": "fact_tombstone", "normalized": "lives in lisbon", "upto_seq": 1},
    {"type": "file", "path": "notes", "is_dir": True, "changed_by": "tl_proj_AbCd1234", "created_at": T0},
    {
        "type": "file",
        "path": "notes/a.md",
        "content": "Porto",
        "version": 2,
        "changed_by": "tl_proj_AbCd1234",
    },
    {
        "type": "file_version",
        "path": "notes/a.md",
        "version": 1,
        "content": "Lisbon",
        "changed_by": "tl_proj_AbCd1234",
        "changed_at": T0,
        "command": "str_replace",
        "replaced_by": "tl_proj_AbCd1234",
        "replaced_at": T0,
    },
]


def sealed(records: list) -> bytes:
    """Records (dicts, or a line's bytes as they are) with a correct end record."""
    return resealed([r if isinstance(r, bytes) else orjson.dumps(r) + b"\n" for r in records])


def test_the_small_hand_written_document_imports(cast):
    response = import_(cast.b, sealed(SMALL))
    assert response.status_code == 201, response.content
    assert response.json()["counts"] == {"messages": 2, "facts": 1, "digests": 1, "tokens": 12}
    assert Entry.objects.get(memory_id=response.json()["id"], seq=2).content == "Noted."


def nested(depth: int) -> bytes:
    """The memory record with metadata nested `depth` levels deep (deeper than orjson writes)."""
    record = orjson.dumps({**SMALL[1], "metadata": {}})
    return record.replace(b'"metadata":{}', b'"metadata":' + b'{"a":' * depth + b"1" + b"}" * depth) + b"\n"


# Each: the line's record type, a change to it, what the 400 names. Every value here got into the
# database before import checked fields as the API does.
SPOILED = {
    "metadata nested 900 levels": ("memory", lambda r: nested(900), "nested deeper than 64 levels"),
    "metadata not an object": (
        "memory",
        lambda r: {**r, "metadata": [1]},
        "memory.metadata: must be an object",
    ),
    "policy malformed": (
        "memory",
        lambda r: {**r, "policy": {"strictWriteDiscipline": "on"}},
        "memory.policy.strictWriteDiscipline: must be an object",
    ),
    "policy with an unknown mode": (
        "memory",
        lambda r: {**r, "policy": {"strictWriteDiscipline": {"onFailure": "shrug"}}},
        "memory.policy.strictWriteDiscipline.onFailure",
    ),
    "external id with a bidi override": (
        "memory",
        lambda r: {**r, "external_id": "user\u202e7"},
        "memory.external_id",
    ),
    "external id with a newline": ("memory", lambda r: {**r, "external_id": "user\n7"}, "memory.external_id"),
    "external id of 5,000 characters": (
        "memory",
        lambda r: {**r, "external_id": "u" * 5000},
        "memory.external_id",
    ),
    "budget of zero": ("memory", lambda r: {**r, "last_budget_tokens": 0}, "memory.last_budget_tokens"),
    "last turn below the entries'": ("memory", lambda r: {**r, "last_turn": 0}, "memory.last_turn"),
    "instructions with a NUL": ("memory", lambda r: {**r, "instructions": "a\x00b"}, "memory.instructions"),
    "turn number negative": ("turn", lambda r: {**r, "number": -1}, "turn.number"),
    "turn in a state of its own": ("turn", lambda r: {**r, "state": "HACKED"}, "turn.state"),
    "turn errors that are not objects": ("turn", lambda r: {**r, "task_errors": ["x"]}, "turn.task_errors"),
    "turn in a thread of 300 characters": ("turn", lambda r: {**r, "thread": "t" * 300}, "turn.thread"),
    "thread named with a bidi override": ("thread", lambda r: {**r, "name": "t\u202e1"}, "thread.name"),
    "thread named default": ("thread", lambda r: {**r, "name": "default"}, "thread.name"),
    "an entry in a thread the document holds no record of": (
        "entry",
        lambda r: {**r, "thread": "elsewhere"},
        "entry.thread: the document holds no thread record",
    ),
    "a system message": ("entry", lambda r: {**r, "role": "system"}, "entry.role"),
    "a role of its own": ("entry", lambda r: {**r, "role": "root"}, "entry.role"),
    "a kind of its own": ("entry", lambda r: {**r, "kind": "hologram"}, "entry.kind"),
    "seq of 2^64 - 1": ("entry", lambda r: {**r, "seq": 2**64 - 1}, "entry.seq"),
    "seq of 2^64 (read as a float)": (
        "entry",
        lambda r: orjson.dumps({**r, "seq": 0}).replace(b'"seq":0', b'"seq":18446744073709551616') + b"\n",
        "entry.seq",
    ),
    "tokens past an integer column": ("entry", lambda r: {**r, "tokens": 2**40}, "entry.tokens"),
    "tokens negative": ("entry", lambda r: {**r, "tokens": -5}, "entry.tokens"),
    "a tool call id of 300 characters": (
        "entry",
        lambda r: {**r, "role": "tool", "tool_call_id": "c" * 300},
        "entry.tool_call_id",
    ),
    "tool calls on a user message": ("entry", lambda r: {**r, "tool_calls": [{}]}, "entry.tool_calls"),
    "a part without a type": ("entry", lambda r: {**r, "parts": [{"text": "x"}]}, "entry.content[0]"),
    "a field the format has not": ("entry", lambda r: {**r, "admin": True}, "entry.admin: unknown field"),
    "a time without its offset": (
        "entry",
        lambda r: {**r, "created_at": "2026-01-02T03:04:05"},
        "entry.created_at",
    ),
    "a day that is not": (
        "entry",
        lambda r: {**r, "created_at": "2026-02-31T00:00:00+00:00"},
        "entry.created_at",
    ),
    "digest text past its column": ("digest", lambda r: {**r, "text": "x" * 300}, "digest.text"),
    "digest of a message": ("digest", lambda r: {**r, "entry_seq": 1}, "digest.entry_seq"),
    "fact text of 3,000 characters": ("fact", lambda r: {**r, "text": "x" * 3000}, "fact.text"),
    "fact text empty": ("fact", lambda r: {**r, "text": "  "}, "fact.text"),
    "fact from an extractor of its own": ("fact", lambda r: {**r, "extractor": "staff"}, "fact.extractor"),
    "fact confidence past one": ("fact", lambda r: {**r, "confidence": 7}, "fact.confidence"),
    "fact from an entry not there": (
        "fact",
        lambda r: {**r, "source_entry_seqs": [99]},
        "fact.source_entry_seqs",
    ),
    "fact superseded by itself": ("fact", lambda r: {**r, "superseded_by": "f1"}, "fact.superseded_by"),
    "fact valid from no time": ("fact", lambda r: {**r, "valid_from": "yesterday"}, "fact.valid_from"),
    "tombstone seq as a string": (
        "fact_tombstone",
        lambda r: {**r, "upto_seq": "9"},
        "fact_tombstone.upto_seq",
    ),
    "file author with a bidi override": (
        "file",
        lambda r: {**r, "changed_by": "tl_\u202eadmin"},
        "file.changed_by",
    ),
    "file version past an integer column": ("file", lambda r: {**r, "version": 2**31}, "file.version"),
    "file version of a command of its own": (
        "file_version",
        lambda r: {**r, "command": "chmod"},
        "file_version.command",
    ),
}


@pytest.mark.parametrize("kind, change, says", SPOILED.values(), ids=SPOILED.keys())
def test_a_record_the_api_would_refuse_is_a_400_naming_its_line_and_field_with_nothing_written(
    cast, kind, change, says
):
    number = next(i for i, r in enumerate(SMALL, start=1) if r["type"] == kind)
    records = [change(dict(r)) if i == number else r for i, r in enumerate(SMALL, start=1)]
    before = written()
    message = error_of(import_(cast.b, sealed(records)), 400, "invalid_request")["message"]
    assert message.startswith(f"line {number}: ") and says in message, message
    assert written() == before
    assert cast.b.get("/v1/memories").status_code == 200


def _lock_taken_elsewhere() -> bool | None:
    """Whether another open file holds the SQLite writers' lock now (None: there is none)."""
    path = str(connection.settings_dict["NAME"])
    if connection.vendor != "sqlite" or writer_lock(path) is None:
        return None
    with open(path + ".lock", "ab") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        return False


@pytest.mark.django_db(transaction=True)
def test_the_whole_document_is_read_and_checked_before_the_write_transaction_and_its_lock(cast):
    """The write is a few multi-row INSERTs in one transaction, under the writers' lock on SQLite;
    reading, checking and building the rows happen before it, so other writers never wait for them."""
    reading, writing = [], []

    def lines():
        for line in sealed(SMALL).splitlines(keepends=True):
            reading.append((connection.in_atomic_block, _lock_taken_elsewhere(), len(writing)))
            yield line

    def watch(execute, sql, params, many, context):
        if sql.startswith("INSERT"):
            writing.append((sql.split()[2], connection.in_atomic_block, _lock_taken_elsewhere()))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(watch):
        memory, created = transfer.memory_import(project=cast.project_b, lines=lines())
    assert created and Entry.objects.filter(memory=memory).count() == 3
    assert all(
        not in_transaction and lock is not True and not inserts for in_transaction, lock, inserts in reading
    )
    assert writing and all(in_transaction and lock in (True, None) for _, in_transaction, lock in writing)
    # one statement a table (a large document: one per MAX_PARAMS parameters)
    tables = [table for table, _, _ in writing if "recall" not in table]
    assert len(tables) == len(set(tables)), tables
    assert _lock_taken_elsewhere() in (False, None)


def test_a_document_cannot_make_the_console_show_its_facts_or_files_as_written_by_staff(cast):
    """Who wrote a fact or a file is the document's claim: stored behind the "imported:" mark, so
    the console never shows it as this install's console or staff."""
    forged = {"extractor": "console", "changed_by": "console:admin", "replaced_by": "console:admin"}
    records = [{**r, **{k: v for k, v in forged.items() if k in r}} for r in SMALL]
    response = import_(cast.b, sealed(records))
    assert response.status_code == 201, response.content
    memory_id = response.json()["id"]
    assert Fact.objects.get(memory_id=memory_id).extractor == "imported:console"
    authors = {f.changed_by for f in MemoryFile.objects.filter(memory_id=memory_id)}
    assert authors == {"imported:console:admin"}
    version = MemoryFileVersion.objects.get(memory_id=memory_id)
    assert (version.changed_by, version.replaced_by) == ("imported:console:admin",) * 2

    staff = Client()
    staff.force_login(cast.staff)
    page = reverse("console:memory", args=[memory_id])
    facts = staff.get(page + "?tab=facts").content.decode()
    assert "imported:console · updated" in facts and ">console · updated" not in facts
    shown = staff.get(page + "?tab=files").content.decode()
    assert "by imported:console:admin" in shown
    assert "by console:admin" not in shown and "from console:admin" not in shown
    # Exported and imported again: still the one mark.
    again = import_(cast.a, export_of(cast.b, memory_id)).json()["id"]
    assert Fact.objects.get(memory_id=again).extractor == "imported:console"
    assert {f.changed_by for f in MemoryFile.objects.filter(memory_id=again)} == authors


def test_files_beyond_this_install_limits_are_refused_with_nothing_written(cast, memory_a, settings):
    build(cast, memory_a)
    document = export_of(cast.a, memory_a.id)
    settings.THREADLESS_MEMORY_FILES_MAX = 3
    before = written()
    body = error_of(import_(cast.b, document), 400, "invalid_request")
    assert "limits" in body["message"] and "THREADLESS_MEMORY_FILES_MAX" in body["hint"]
    assert written() == before


def test_an_import_keeps_only_the_newest_file_versions_this_install_allows(cast, settings):
    settings.THREADLESS_MEMORY_FILE_VERSIONS_MAX = 2
    old = SMALL[-1]
    versions = [
        {**old, "version": n, "content": f"v{n}", "replaced_at": f"2026-0{n}-01T00:00:00+00:00"}
        for n in (1, 3, 2, 4)
    ]
    response = import_(cast.b, sealed(SMALL[:-1] + versions))
    assert response.status_code == 201, response.content
    kept = MemoryFileVersion.objects.filter(memory_id=response.json()["id"])
    assert sorted(kept.values_list("content", flat=True)) == ["v3", "v4"]


def test_an_install_that_does_not_read_file_records_refuses_the_document_by_name(cast, memory_a, monkeypatch):
    """File records are new record types in format version 1: a reader without them stops at the
    first one with the unknown-type error, rather than import the memory without its files."""
    build(cast, memory_a)
    document = export_of(cast.a, memory_a.id)
    older = {
        kind: handler for kind, handler in transfer.document.IMPORTERS.items() if not kind.startswith("file")
    }
    monkeypatch.setattr(transfer.document, "IMPORTERS", older)
    before = written()
    body = error_of(import_(cast.b, document), 400, "invalid_request")
    assert "Unknown record type 'file'" in body["message"] and "Upgrade" in body["hint"]
    assert written() == before


@pytest.mark.parametrize("external_id", [None, "user-7"])
def test_importing_the_same_document_again_answers_the_first_import(cast, memory_a, external_id):
    memory_a.external_id = external_id
    memory_a.save(update_fields=["external_id"])
    build(cast, memory_a)
    document = export_of(cast.a, memory_a.id)
    first = import_(cast.b, document)
    assert first.status_code == 201, first.content
    before = written()
    again = import_(cast.b, document)
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    assert written() == before


def damaged(document: bytes) -> bytes:
    """One character changed inside a message: still valid JSON, caught by the end record's digest."""
    assert b"Lisbon" in document
    return document.replace(b"Lisbon", b"Lisbin", 1)


def truncated(document: bytes) -> bytes:
    return b"".join(document.splitlines(keepends=True)[:-3])


def newer(document: bytes) -> bytes:
    """A document of the version after this install's that is otherwise whole (its end record
    recomputed)."""
    lines = document.splitlines(keepends=True)[:-1]
    header = orjson.loads(lines[0])
    lines[0] = orjson.dumps({**header, "version": transfer.VERSION + 1}) + b"\n"
    digest = hashlib.sha256(b"".join(lines)).hexdigest()
    return b"".join(lines) + orjson.dumps({"type": "end", "records": len(lines), "sha256": digest}) + b"\n"


def cut_mid_line(document: bytes) -> bytes:
    return document[: len(document) // 2]


@pytest.mark.parametrize(
    "spoil, says",
    [
        (damaged, "damaged"),
        (truncated, "truncated"),
        (cut_mid_line, "not JSON"),
        (newer, "newer"),
    ],
)
def test_a_damaged_truncated_or_newer_document_is_refused_with_nothing_written(cast, memory_a, spoil, says):
    build(cast, memory_a)
    document = export_of(cast.a, memory_a.id)
    before = written()
    body = error_of(import_(cast.b, spoil(document)), 400, "invalid_request")
    assert says in body["message"]
    assert written() == before


def test_a_document_with_an_unknown_record_type_is_refused(cast, memory_a):
    build(cast, memory_a)
    lines = export_of(cast.a, memory_a.id).splitlines(keepends=True)[:-1]
    lines.append(orjson.dumps({"type": "hologram", "x": 1}) + b"\n")
    end = {"type": "end", "records": len(lines), "sha256": hashlib.sha256(b"".join(lines)).hexdigest()}
    before = written()
    body = error_of(import_(cast.b, b"".join(lines) + orjson.dumps(end)), 400, "invalid_request")
    assert "hologram" in body["message"] and written() == before


def test_import_refuses_a_publishable_or_revoked_key_and_writes_nothing(cast, memory_a):
    from projects import services as project_services

    build(cast, memory_a)
    document = export_of(cast.a, memory_a.id)
    key, revoked = project_services.key_create(project=cast.project_b, name="old")
    project_services.key_revoke(prefix=key.prefix)
    before = written()
    assert (
        "publishable"
        in error_of(import_(cast.api(cast.publishable_a), document), 401, "unauthorized")["message"]
    )
    assert "revoked" in error_of(import_(cast.api(revoked), document), 401, "unauthorized")["message"]
    assert written() == before


def test_import_takes_ndjson_only_and_export_is_scoped_to_the_key_project(cast, memory_a):
    assert (
        "x-ndjson"
        in error_of(post(cast.a, "/v1/memories/import", {"x": 1}), 400, "invalid_request")["message"]
    )
    assert cast.b.get(f"/v1/memories/{memory_a.id}/export").status_code == 404
    assert cast.anon.get(f"/v1/memories/{memory_a.id}/export").status_code == 401
    assert import_(cast.anon, b"").status_code == 401
    error_of(import_(cast.a, b""), 400, "invalid_request")
    error_of(import_(cast.a, b"not json\n"), 400, "invalid_request")


def test_an_import_whose_external_id_is_taken_in_the_project_is_a_409(cast, memory_a):
    memory_a.external_id = "user-7"
    memory_a.save(update_fields=["external_id"])
    build(cast, memory_a)
    document = export_of(cast.a, memory_a.id)
    before = written()
    error_of(import_(cast.a, document), 409, "conflict")
    assert written() == before
    assert import_(cast.b, document).status_code == 201


def test_an_import_past_the_plan_memory_allowance_is_the_same_429_as_creating_one(cast, memory_a):
    build(cast, memory_a)
    document = export_of(cast.a, memory_a.id)
    other = export_of(cast.a, services.memory_create(project=cast.project_a)[0].id)
    cast.project_b.allowance_memories = 1
    cast.project_b.save()
    first = import_(cast.b, document)
    assert first.status_code == 201, first.content
    created = error_of(post(cast.b, "/v1/memories", {}), 429, "quota_exceeded")
    before = written()
    for _ in range(3):
        refused = error_of(import_(cast.b, other), 429, "quota_exceeded")
        assert (refused["message"], refused["hint"]) == (created["message"], created["hint"])
    assert written() == before
    # The document its first import made is no new memory: answered as before.
    again = import_(cast.b, document)
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]


def test_the_commands_export_a_project_and_import_it_into_another(cast, memory_a, tmp_path):
    build(cast, memory_a)
    call_command("export_memories", "--project", cast.project_a.id, "--output", str(tmp_path))
    path = tmp_path / f"{memory_a.id}.jsonl"
    assert (
        path.read_bytes().splitlines()[1:-1]
        == b"".join(memory_export(memory=Memory.objects.get(pk=memory_a.pk))).splitlines()[1:-1]
    )
    out = io.StringIO()
    call_command("import_memories", "--project", cast.project_b.id, str(path), "--json", stdout=out)
    made = json.loads(out.getvalue())
    assert made["created"] is True
    assert snapshot(Memory.objects.get(pk=made["id"])) == as_imported(snapshot(memory_a))
    (tmp_path / "cut.jsonl").write_bytes(truncated(path.read_bytes()))
    before = written()
    with pytest.raises(CommandError):
        call_command(
            "import_memories",
            "--project",
            cast.project_b.id,
            str(tmp_path / "cut.jsonl"),
            stderr=io.StringIO(),
        )
    assert written() == before


def test_export_reads_lazily_a_chunk_at_a_time(cast, memory_a):
    """Streaming: the first lines go out before the entries are read, so a memory of any size
    exports in bounded memory (a 100k-message export peaks at a few MB: docs/deployment.md)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    build(cast, memory_a)
    lines = memory_export(memory=Memory.objects.get(pk=memory_a.pk))
    with CaptureQueriesContext(connection) as queries:
        assert orjson.loads(next(lines))["type"] == "header"
        assert orjson.loads(next(lines))["type"] == "memory"
        assert orjson.loads(next(lines))["type"] == "turn"
    assert not any(Entry._meta.db_table in q["sql"] for q in queries.captured_queries)
    assert orjson.loads(list(lines)[-1])["type"] == "end"
