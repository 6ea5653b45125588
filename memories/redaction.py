"""Redaction: the one implementation, used by digests, taskErrors, SSE, raw errors and logging.

`redact_secrets` removes credentials (what the logs and the staff-only raw error get).
`digest_text` builds the short model- and caller-facing text of SPEC 6.3: provider JSON reduced
to its message, secrets redacted, URLs replaced with [url], stack frames and fully-qualified
exception class names stripped, whitespace collapsed, at most 200 characters.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

DIGEST_LIMIT = 200

_SECRET_KEYS = r"(?:api[_-]?key|apikey|access[_-]?token|refresh[_-]?token|token|secret|client[_-]?secret|password|passwd|pwd|authorization|x-api-key)"

_SECRET_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # key=value / "key": "value" / key: value, for keys named like credentials.
    (
        re.compile(
            r"""(?ix)
            (["']?\b[\w-]*""" + _SECRET_KEYS + r"""\b["']?\s*[:=]\s*)   # the key and separator
            (?:"[^"\n]*"?|'[^'\n]*'?|(?:Bearer|Basic|Token|Digest)\s+[^\s,;"'}]+|[^\s,;"'}&]+)   # the value
            """
        ),
        r"\1[redacted]",
    ),
    (re.compile(r"(?i)\bBearer\s+[A-Za-z0-9._~+/=-]+"), "Bearer [redacted]"),
    (re.compile(r"\bsk-ant-[A-Za-z0-9_-]{8,}"), "[redacted]"),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"), "[redacted]"),
    (re.compile(r"\btl_(?:proj|pub)_[A-Za-z0-9]{6,}"), "[redacted]"),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), "[redacted]"),
    (re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"), "[redacted]"),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}\b"), "[redacted]"),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), "[redacted]"),
]

_URL = re.compile(r"""\b(?:[a-zA-Z][a-zA-Z0-9+.-]*://|www\.)[^\s"'<>()]+""")
# Python and Java stack frames, and "Traceback (most recent call last):".
_FRAMES = [
    re.compile(r"Traceback \(most recent call last\):"),
    re.compile(r'\s*File "[^"]*", line \d+(?:, in [^\n]*)?(?:\n[ \t]+[^\n]*)?'),
    re.compile(r"\s*\bat [\w$./<>-]+\([^)]*\)"),
    re.compile(r"\s*\.\.\. \d+ more"),
    re.compile(r"\s*Caused by:"),
]
# A fully-qualified exception class name ("java.net.ConnectException: " or
# "httpx.ConnectTimeout: "): dotted lowercase packages then a CamelCase class name.
_FQCN = re.compile(r"\b(?:[a-z_][\w]*\.)+[A-Z]\w*(?:Exception|Error|Timeout|Failure|Fault|Refused|Exit|Interrupt)\w*:?\s*")
_HTML = re.compile(r"<(script|style)[^>]*>.*?</\1>|<[^>]+>", re.S | re.I)
_WS = re.compile(r"\s+")


def redact_secrets(text: str) -> str:
    if not text:
        return text
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


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
    except ValueError:
        return None
    return _message_from(data)


def reduce_json(text: str) -> str:
    """A JSON error body becomes its message, also when it stands inside other text
    ("Chat model execution failed: {…}", "HTTP 503 {…} at …"); other text is returned as it is."""
    message = provider_message(text)
    if message is not None:
        return message
    start = text.find("{")
    while start != -1:
        try:
            data, end = _DECODER.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        inner = _message_from(data)
        if inner is not None:
            return text[:start] + inner + text[end:]
        start = text.find("{", end)
    return text


_DECODER = json.JSONDecoder()


def clean_reason(text: str) -> str:
    """Model-facing reason: JSON reduced, secrets, URLs, frames and class names removed."""
    text = reduce_json(text or "")
    text = redact_secrets(text)
    text = _HTML.sub(" ", text)
    text = _URL.sub("[url]", text)
    for frame in _FRAMES:
        text = frame.sub(" ", text)
    text = _FQCN.sub("", text)
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
    prefix = f"Task '{redact_secrets(task_id)}' failed: "
    return cap(prefix + clean_reason(reason))


def redact_value(value: Any) -> Any:
    """`redact_secrets` on every string inside a JSON value (a failed task's output)."""
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, list):
        return [redact_value(v) for v in value]
    if isinstance(value, dict):
        return {k: redact_value(v) for k, v in value.items()}
    return value


def raw_error_text(text: str, limit: int = 20_000) -> str:
    """What staff see: the raw failure with secrets removed (URLs and class names kept)."""
    return redact_secrets(text or "")[:limit]


class RedactingFilter(logging.Filter):
    """Logging filter: the same secret redaction on every record's final message."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a bad format string must not lose the record
            message = str(record.msg)
        redacted = redact_secrets(message)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_secrets(record.exc_text)
        if redacted != message or record.args:
            record.msg = redacted
            record.args = None
        return True
