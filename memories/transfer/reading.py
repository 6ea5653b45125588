"""Reading a document's lines: each a JSON record of known depth and size, the header's format
and version checked, the running count and digest compared with the `end` record's. A
truncated, damaged or newer document is refused here, before any record is looked at."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator

import orjson

from common.errors import InvalidRequest
from common.http.body import MAX_JSON_DEPTH, json_depth, reject_unknown
from memories.transfer.format import FORMAT, VERSION

MAX_LINE_BYTES = 16 * 1024 * 1024
HEADER_FIELDS = frozenset({"type", "format", "version", "exported_at", "source"})


class Reader:
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


def header_check(record: dict) -> None:
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


def refuse(line: int, message: str) -> InvalidRequest:
    return InvalidRequest(f"line {line}: {message}")
