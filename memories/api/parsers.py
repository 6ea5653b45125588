import orjson
from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from memories.errors import PayloadTooLarge


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
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise ParseError("The body is not valid JSON.")
