"""The DRF parser for /v1: orjson, the body size limit and the depth limit of `common.http.body`."""

from django.conf import settings
from rest_framework.parsers import BaseParser

from common.errors import PayloadTooLarge
from common.http.body import parse_json


class ORJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.THREADLESS_MAX_BODY_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(f"The body is larger than the limit of {limit} bytes.")
        return parse_json(raw)
