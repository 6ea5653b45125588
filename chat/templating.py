"""`{{ input }}` and `{{ data.<key>.<path> }}` templates for http_call (no code, no filters).

Injection-safe by context: `render(url, scope, escape=quote)` percent-encodes what it inserts
into a URL; `render_json` renders a string body as a JSON text, so an inserted value can never
end a JSON string or add a field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}")


def lookup(path: str, scope: dict) -> Any:
    value: Any = scope
    for part in path.split("."):
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
        if value is None:
            return None
    return value


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def render(template: str, scope: dict, *, escape: Callable[[str], str] | None = None) -> str:
    def replace(match: re.Match) -> str:
        text = _as_text(lookup(match.group(1), scope))
        return escape(text) if escape else text

    return _PLACEHOLDER.sub(replace, template)


def _json_state(text: str, in_string: bool, escaped: bool) -> tuple[bool, bool]:
    """Where a JSON text stands after `text`: inside a string literal, and after a backslash there."""
    for char in text:
        if escaped:
            escaped = False
        elif in_string and char == "\\":
            escaped = True
        elif char == '"':
            in_string = not in_string
    return in_string, escaped


def render_json(template: str, scope: dict) -> str:
    """A string body template rendered as JSON text, one linear pass over the template.

    A placeholder inside a JSON string literal is inserted JSON-escaped (its quotes, backslashes
    and control characters cannot close the string); one outside a string is inserted as a JSON
    value (a string in quotes, a number, an object, null when missing). The inserted text never
    changes the template's own string state, so the next placeholder is judged on the template.
    """
    out: list[str] = []
    pos = 0
    in_string = escaped = False
    for match in _PLACEHOLDER.finditer(template):
        segment = template[pos : match.start()]
        in_string, escaped = _json_state(segment, in_string, escaped)
        out.append(segment)
        value = lookup(match.group(1), scope)
        if in_string:
            if escaped:  # the template ended on a lone backslash: make it a literal one
                out.append("\\")
                escaped = False
            out.append(json.dumps(_as_text(value), ensure_ascii=False)[1:-1])
        else:
            out.append(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
        pos = match.end()
    out.append(template[pos:])
    return "".join(out)
