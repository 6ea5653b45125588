"""Each field's rule for an import: the rule the API holds the field to, through the same
functions where the API has one (external ids, metadata, policy, fact texts, file paths), else
its column's range and type. A rule returns the value to store or refuses it; `checked` runs a
record through its table and names the field it refuses. Who wrote a fact or a file is the
document's claim, kept behind the "imported:" mark (`imported`). Nothing here reads the database."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from common.errors import InvalidRequest
from common.http.body import reject_unknown
from common.messages import cut_marker, stored_reply_limit
from memories import services
from memories.facts.store import IMPORTED
from memories.models import DEFAULT_THREAD, Entry, Turn
from memories.policy import policy_parse
from memories.services import files

INT_MAX = 2**31 - 1  # a PositiveIntegerField (PostgreSQL's integer)
BIG_MAX = 2**63 - 1  # a PositiveBigIntegerField (bigint)
EXTRACTORS = ("api", "console", "rules", "llm")
FILE_COMMANDS = ("create", "str_replace", "insert", "delete", "rename")
_REQUIRED = object()


class _Unfit(Exception):
    """A value breaks its field's rule (the message says how; `checked` names the field)."""


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


def imported(value: str) -> str:
    """A document's word for who wrote something, kept only behind the "imported:" mark: the
    console shows it as the document's claim, never as an actor of this install."""
    return value if not value or value.startswith(IMPORTED) else IMPORTED + value


def _actor(value) -> str:
    """Who wrote a file or its version: printable (the console shows it), at most 120 characters
    with its mark."""
    if not isinstance(value, str) or not value.isprintable() or len(imported(value)) > 120:
        raise _Unfit(f"must be a string of at most {120 - len(IMPORTED)} printable characters.")
    return imported(value)


def _extractor(value) -> str:
    if value not in EXTRACTORS and value not in [IMPORTED + e for e in EXTRACTORS]:
        raise _Unfit(f"must be one of {', '.join(EXTRACTORS)}.")
    return imported(value)


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
    # document.COUNTS: made again from the document's rows, only checked here.
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


def checked(record: dict, rules: Rules) -> dict:
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
