import orjson
from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from common.errors import InvalidRequest, PayloadTooLarge

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
        raise InvalidRequest(f"body: nested deeper than {limit} levels.",
                             hint="Send a flatter JSON body.")
    return value


class ORJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.THREADLESS_MAX_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(f"The body is larger than the limit of {limit} bytes.")
        if not raw:
            return {}
        try:
            data = orjson.loads(raw)  # orjson refuses more than 1,024 levels (a ParseError below)
        except orjson.JSONDecodeError:
            raise ParseError("The body is not valid JSON.")
        return check_depth(data)
