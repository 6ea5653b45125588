"""`{{ input }}` and `{{ data.<key>.<path> }}` templates for http_call (no code, no filters)."""

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
