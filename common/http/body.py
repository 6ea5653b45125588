"""JSON request bodies for /v1, the one way every route reads them (DRF views through
`parsers.ORJSONParser`, the plain async conversation views through `json_object_body`).

orjson refuses more than 1,024 levels; `check_depth` refuses more than MAX_JSON_DEPTH.
"""

from __future__ import annotations

from typing import Any

import orjson

from common.errors import InvalidRequest
from common.redaction import echo

MAX_JSON_DEPTH = 64  # deeper bodies are refused: nothing in the API nests like that, and
# deep values break whatever walks them later (orjson.dumps stops at 255 levels, Python at ~1,000)


def json_depth(value, limit: int = MAX_JSON_DEPTH) -> int:
    """How deep a parsed JSON value nests (counted without recursion, stopping past `limit`)."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def check_depth(value, limit: int = MAX_JSON_DEPTH):
    """The value itself, or 400 invalid_request when it nests deeper than `limit` levels."""
    if json_depth(value, limit) > limit:
        raise InvalidRequest(f"body: nested deeper than {limit} levels.", hint="Send a flatter JSON body.")
    return value


def parse_json(raw: bytes) -> Any:
    """A body's JSON value (an empty body is `{}`), depth-checked; 400 when it is not JSON."""
    if not raw:
        return {}
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise InvalidRequest(
            "The body is not valid JSON.", hint="Send a JSON object with Content-Type: application/json."
        ) from None
    return check_depth(data)


def json_object(data: Any) -> dict:
    """The body as an object, or 400 (a list or a string is not a request)."""
    if not isinstance(data, dict):
        raise InvalidRequest("body: must be a JSON object.")
    return data


def reject_unknown(data: dict, allowed: set[str] | frozenset[str], where: str = "") -> None:
    """400 naming the first field the route does not take (cut short: it is request input);
    `where` is the path of a nested object ("failures[0]")."""
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InvalidRequest(f"{where + '.' if where else ''}{echo(unknown[0])}: unknown field.")


def json_object_body(raw: bytes, allowed: set[str]) -> dict:
    """For plain Django views: parse, require an object, refuse unknown fields."""
    data = json_object(parse_json(raw))
    reject_unknown(data, allowed)
    return data
