"""Redaction: the one implementation, used by digests, taskErrors, SSE, raw errors and logging.

`redact_secrets` removes credentials (what the logs and the staff-only raw error get).
`digest_text` builds the short model- and caller-facing text of SPEC 6.3: provider JSON reduced
to its message, secrets redacted, URLs replaced with [url], stack frames and fully-qualified
exception class names stripped, whitespace collapsed, at most 200 characters.
`raw_error_text` is the staff-only raw error: secrets, URL credentials and query values removed,
host and path kept. `redact_query_values` is that for one URL or request path (the access log);
`url_without_query` drops the whole query (trace attributes, whose queries may come decoded).
`echo` is the short, cut prefix of request input an error message may repeat.

Every pattern here runs in linear time (Python's `re` backtracks, so this is by construction):
* a pattern that starts with a run of some class has a lookbehind that forbids starting inside
  such a run (no `\\b[\\w-]*…` scans from every position of a long word);
* runs are possessive (`*+`, `++`), so a failed match never gives characters back, and no two
  adjacent quantifiers can split the same characters between them;
* no pattern starts with an optional run (`\\s*…` would rescan a run of spaces from every space).
On top of that, input is cut to a few KB before any pattern sees it (`INPUT_LIMIT`,
`RAW_LIMIT`, `LOG_LIMIT`); `make bench` measures the patterns without the cut (bench/redaction_bench.py).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

DIGEST_LIMIT = 200
INPUT_LIMIT = 4_096  # what a digest is built from (the 200-character digest needs no more)
RAW_LIMIT = 8_192  # the staff raw error and any other redact_secrets caller
LOG_LIMIT = 16_384  # a log record: its head and its tail (a traceback's point is its last line)
JSON_LIMIT = 65_536  # how much of an error text is searched for a provider JSON body
JSON_ATTEMPTS = 16  # "{" positions tried when a JSON body stands inside other text
ECHO_LIMIT = 64  # request input repeated in an error message

_SECRET_KEYS = (
    r"(?:api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|token|secret|client[_-]?secret"
    r"|password|passwd|pwd|authorization|x-api-key)"
)
# Query parameters whose value is a credential (signed URLs, API keys in the query).
_QUERY_KEYS = (
    r"(?:key|api[_-]?key|apikey|sig|signature|token|access[_-]?token|id[_-]?token|refresh[_-]?token"
    r"|auth|auth[_-]?token|code|client[_-]?token|client[_-]?secret|secret|password|passwd|pass|pwd"
    r"|credential|session|sessionid|x-amz-signature|x-amz-credential|x-amz-security-token"
    r"|x-goog-signature|x-goog-credential)"
)

_SECRET_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # key=value / "key": "value" / key: value, for keys named like credentials. The key may end a
    # longer name (`X-API-Key`, `client_token`): its start is not anchored, so no leading scan.
    (
        re.compile(
            r"""(?ix)
            (["']?"""
            + _SECRET_KEYS
            + r"""\b["']?\s*+[:=]\s*+)   # the key and separator
            # the value
            (?:"[^"\n]*+"?|'[^'\n]*+'?|(?:Bearer|Basic|Token|Digest)\s++[^\s,;"'}]++|[^\s,;"'}&]++)
            """
        ),
        r"\1[redacted]",
    ),
    # URL credentials: scheme://user:password@host → scheme://[redacted]@host
    (re.compile(r"(?<![A-Za-z0-9+-])([A-Za-z][A-Za-z0-9+-]*+://)[^\s/?#@\"'<>]++@"), r"\1[redacted]@"),
    # ?key=… / &sig=… / &token=…
    (re.compile(r"(?i)([?&;]" + _QUERY_KEYS + r"=)[^&#;\s\"'<>]++"), r"\1[redacted]"),
    # A token is never the word "Bearer" itself, so "Bearer Bearer <token>" still loses its token.
    (re.compile(r"(?i)\bBearer\s++(?!Bearer\b)[A-Za-z0-9._~+/=-]++"), "Bearer [redacted]"),
    (re.compile(r"\bsk-ant-[A-Za-z0-9_-]{8,}+"), "[redacted]"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}+"), "[redacted]"),
    (re.compile(r"\btl_(?:proj|pub)_[A-Za-z0-9]{6,}+"), "[redacted]"),
    (
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}+\.[A-Za-z0-9_-]{5,}+\.[A-Za-z0-9_-]*+"),
        "[redacted]",
    ),
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), "[redacted]"),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{30,}+"), "[redacted]"),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}+\b"), "[redacted]"),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}+"), "[redacted]"),
]

_URL_CHARS = r"""[^\s"'<>()]"""
# A URL with a scheme, a www. link, or a scheme-less host (IPv4, dotted name or localhost, with an
# optional port) followed by a path: `api.internal.corp/v1/chat`, `10.0.0.5:11434/api/chat`.
# A bare `host` or `host:port` is left alone (the http_call digest names its host on purpose).
_URL = re.compile(
    r"(?<![A-Za-z0-9+-])[A-Za-z][A-Za-z0-9+-]*+://" + _URL_CHARS + r"*+"
    r"|\bwww\." + _URL_CHARS + r"++"
    r"|(?<![\w.@:/-])(?:\d{1,3}+(?:\.\d{1,3}+){3}|(?:[A-Za-z0-9-]++\.)++[A-Za-z][A-Za-z0-9-]*+|localhost)"
    r"(?::\d{1,5}+)?/" + _URL_CHARS + r"*+"
)
# Python and Java stack frames, and "Traceback (most recent call last):".
_FRAMES = [
    re.compile(r"Traceback \(most recent call last\):"),
    re.compile(r'File "[^"\n]*+", line \d++(?:, in [^\n]*+)?(?:\n[ \t]++[^\n]*+)?'),
    re.compile(r"\bat [\w$./<>-]++\([^()\n]*+\)"),
    re.compile(r"\.\.\. \d++ more"),
    re.compile(r"Caused by:"),
]
# A fully-qualified exception class name ("java.net.ConnectException: " or
# "httpx.ConnectTimeout: "): dotted lowercase packages then a CamelCase class name whose name
# has one of the suffixes below (checked in Python, so the pattern itself never backtracks).
_FQCN = re.compile(r"(?<![\w.$])(?:[a-z_]\w*+\.)++([A-Z]\w*+):?\s*+")
_FQCN_SUFFIXES = ("Exception", "Error", "Timeout", "Failure", "Fault", "Refused", "Exit", "Interrupt")
_TAG = re.compile(r"<[^<>]++>")
_BLOCK = re.compile(r"(?i)<(script|style)\b")
_WS = re.compile(r"\s++")


def cut(text: str, limit: int) -> str:
    """The first `limit` characters; a word cut in two at the end is dropped (so a secret cut in
    half does not leave its first characters behind), and `…` marks the cut."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = max(head.rfind(" ", limit - 64), head.rfind("\n", limit - 64), head.rfind("\t", limit - 64))
    if space > 0:
        head = head[:space]
    return head.rstrip() + "…"


def cut_middle(text: str, limit: int) -> str:
    """At most about `limit` characters: the head (three quarters) and the tail (a quarter) with a
    marker between, partial words at both cuts dropped (a traceback's point is its last line)."""
    if len(text) <= limit:
        return text
    head = cut(text, limit * 3 // 4)
    tail = text[len(text) - limit // 4 :]
    space = min(
        (i for i in (tail.find(" ", 0, 64), tail.find("\n", 0, 64), tail.find("\t", 0, 64)) if i != -1),
        default=-1,
    )
    if space != -1:
        tail = tail[space:]
    return f"{head} [{len(text) - len(head) - len(tail)} characters cut] …{tail}"


def echo(value: Any, limit: int = ECHO_LIMIT) -> str:
    """Request input as an error message may repeat it: a short, cut prefix, secrets redacted."""
    text = value if isinstance(value, str) else str(value)
    text = redact_secrets(text[: limit * 2], None)  # a replacement can be longer than what it hides
    return text if len(text) <= limit else text[: limit - 1] + "…"


def redact_secrets(text: str, limit: int | None = RAW_LIMIT) -> str:
    """Credentials removed; the input cut to `limit` characters first, and the result again
    (a replacement can be longer than what it hides; None: no cut)."""
    if not text:
        return text
    if limit is not None:
        text = cut(text, limit)
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text if limit is None else cut(text, limit)


def redact_query_values(url: str) -> str:
    """One URL or request path (`https://h/p?key=…`, `/v1/x?key=…#k=…`) with every query and
    fragment value replaced by [redacted]; scheme, host, path and parameter names kept."""
    cut_at = min((i for i in (url.find("?"), url.find("#")) if i != -1), default=-1)
    if cut_at == -1:
        return url
    head, tail = url[:cut_at], url[cut_at:]
    parts = re.split(r"([?#&;])", tail)  # a literal class: linear
    out = []
    for part in parts:
        name, sep, _ = part.partition("=")
        out.append(f"{name}=[redacted]" if sep else part)
    return head + "".join(out)


def url_without_query(url: str) -> str:
    """One URL or request path with its whole query and fragment replaced by `?[redacted]`. For a
    URL whose query may have been percent-decoded (OpenTelemetry's ASGI instrumentation decodes
    it), where `%26` has become `&` and no split into names and values can be trusted."""
    cut_at = min((i for i in (url.find("?"), url.find("#")) if i != -1), default=-1)
    return url if cut_at == -1 else url[:cut_at] + "?[redacted]"


def _query_values_removed(match: re.Match[str]) -> str:
    return redact_query_values(match.group(0))


def redact_urls(text: str) -> str:
    """Every URL keeps its scheme, host and path; query and fragment values become [redacted]
    (credentials in the authority are `redact_secrets`' work)."""
    return _URL.sub(_query_values_removed, text)


def _message_from(data: Any) -> str | None:
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    if isinstance(data.get("message"), str):
        return data["message"]
    if isinstance(error, str):
        return error
    detail = data.get("detail")
    if isinstance(detail, str):
        return detail
    if detail is not None and not isinstance(detail, (dict, list)):
        return str(detail)
    return None


def provider_message(body: str | bytes | None) -> str | None:
    """The message of a provider's JSON error body: error.message, message, error, detail."""
    if body is None:
        return None
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    text = body.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser goes
        return None
    return _message_from(data)


def reduce_json(text: str) -> str:
    """A JSON error body becomes its message, also when it stands inside other text
    ("Chat model execution failed: {…}", "HTTP 503 {…} at …"); other text is returned as it is.
    Only the first `JSON_LIMIT` characters and `JSON_ATTEMPTS` opening braces are tried."""
    text = text[:JSON_LIMIT]
    message = provider_message(text)
    if message is not None:
        return message
    start = text.find("{")
    attempts = 0
    while start != -1 and attempts < JSON_ATTEMPTS:
        attempts += 1
        try:
            data, end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            start = text.find("{", start + 1)
            continue
        inner = _message_from(data)
        if inner is not None:
            return text[:start] + inner + text[end:]
        start = text.find("{", end)
    return text


_DECODER = json.JSONDecoder()


def _strip_html(text: str) -> str:
    """Script and style blocks (an unclosed one runs to the end) and tags become a space."""
    if "<" not in text:
        return text
    out: list[str] = []
    pos = 0
    lower = text.lower()
    while True:
        block = _BLOCK.search(text, pos)
        if block is None:
            out.append(text[pos:])
            break
        out.append(text[pos : block.start()])
        close = lower.find("</" + block.group(1).lower(), block.end())
        if close == -1:
            break
        end = text.find(">", close)
        pos = len(text) if end == -1 else end + 1
        out.append(" ")
    return _TAG.sub(" ", "".join(out))


def _strip_class_name(match: re.Match[str]) -> str:
    return "" if any(s in match.group(1) for s in _FQCN_SUFFIXES) else match.group(0)


def clean_reason(text: str, limit: int | None = INPUT_LIMIT) -> str:
    """Model-facing reason: JSON reduced, secrets, URLs, frames and class names removed.
    The text is cut to `limit` characters after its JSON body is reduced (None: no cut)."""
    text = reduce_json(text or "")
    if limit is not None:
        text = cut(text, limit)
    text = redact_secrets(text, None)
    text = _strip_html(text)
    for frame in _FRAMES:
        text = frame.sub(" ", text)
    text = _URL.sub("[url]", text)
    text = _FQCN.sub(_strip_class_name, text)
    return _WS.sub(" ", text).strip()


def cap(text: str, limit: int = DIGEST_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


def digest_text(task_id: str, reason: str) -> str:
    """`Task '<task_id>' failed: <reason>`, cleaned and capped at 200 characters.

    The prefix is never touched by the URL or class-name stripping (a task id such as
    `eddi://ai.labs.llm` stays as written).
    """
    prefix = f"Task '{redact_secrets(task_id, 256)}' failed: "
    return cap(prefix + clean_reason(reason))


# Field names whose string value is a credential whatever it looks like (an HTTP response body).
SECRET_FIELD = re.compile(r"(?i)api[_-]?key|token|secret|passw|authorization")


def redact_value(value: Any, max_depth: int = 64, *, secret_fields: bool = False) -> Any:
    """`redact_secrets` on every string inside a JSON value (a failed task's output), the one
    walker for JSON values. With `secret_fields`, a string under a field named like a credential
    (SECRET_FIELD) becomes "[redacted]" whole. Iterative (no recursion limit to hit); containers
    nested deeper than `max_depth` become "[too deep]"."""
    if not isinstance(value, (list, dict)):
        return redact_secrets(value) if isinstance(value, str) else value
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]  # (source, parent, slot, depth)
    while stack:
        source, parent, slot, depth = stack.pop()
        if isinstance(source, str):
            parent[slot] = redact_secrets(source)
        elif isinstance(source, (list, dict)):
            if depth >= max_depth:
                parent[slot] = "[too deep]"
                continue
            if isinstance(source, list):
                copy: Any = [None] * len(source)
                items = enumerate(source)
            else:
                copy = dict.fromkeys(source)
                items = source.items()
            parent[slot] = copy
            for key, item in items:
                if (
                    secret_fields
                    and isinstance(item, str)
                    and isinstance(copy, dict)
                    and SECRET_FIELD.search(str(key))
                ):
                    copy[key] = "[redacted]"
                    continue
                stack.append((item, copy, key, depth + 1))
        else:
            parent[slot] = source
    return root[0]


def raw_error_text(text: str, limit: int = RAW_LIMIT) -> str:
    """What staff see: the raw failure with secrets, URL credentials and query values removed
    (scheme, host, path and class names kept), cut to about `limit` characters (head and tail)
    before redaction."""
    return cut_middle(redact_urls(redact_secrets(cut_middle(text or "", limit), None)), limit + 256)


def _redact_log_text(text: str) -> str:
    return redact_secrets(cut_middle(text, LOG_LIMIT), None)


def _access_path(path: Any) -> Any:
    """An access-log request path with every query value redacted (`/v1/x?key=[redacted]`)."""
    return redact_query_values(path) if isinstance(path, str) else path


class OneLineFilter(logging.Filter):
    """Logging filter: the record without its traceback, one line. For events an outsider sets off at
    will, whose traceback says nothing new: Django logs every request with a Host header outside
    ALLOWED_HOSTS (`django.security.DisallowedHost`, answered 400) at ERROR with the whole stack,
    ~40 lines a request, so anyone could flood the log by sending bad Host headers."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info = None
        record.exc_text = None
        record.stack_info = None
        return True


class RedactingFilter(logging.Filter):
    """Logging filter: the same secret redaction on every record's final message.

    uvicorn's access log (logger `uvicorn.access`, args `(client, method, path, http, status)`)
    is routed through it by settings.LOGGING; its path keeps no query value at all."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name == "uvicorn.access" and isinstance(record.args, tuple) and len(record.args) >= 3:
            args = list(record.args)
            args[2] = _access_path(args[2])
            record.args = tuple(args)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string must not lose the record
            message = str(record.msg)
        redacted = _redact_log_text(message)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = _redact_log_text(record.exc_text)
        if redacted != message or record.args:
            record.msg = redacted
            record.args = None
        return True
