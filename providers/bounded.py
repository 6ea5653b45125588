"""Bounded reads of upstream answers: decoded bytes counted against a cap, event streams split
into frames by scanning each byte once.

Every reader of an upstream body (the proxy's JSON answers and streams, the llm task, the
embeddings client, http_call) goes through here, so a hostile or broken upstream costs at most
the cap in memory and linear time, whatever it sends:

* `read_body` / `aread_body` — a whole answer, at most `answer_cap()` decoded bytes.
* `read_head` / `aread_head` — the first 64 KiB of an error answer, the rest left unread.
* `iter_body` / `aiter_body` — decoded pieces as they arrive, stopping past a cap.
* `SSEFramer` — complete SSE frames from those pieces; a frame (and so the held-back buffer) is
  at most `frame_cap()` bytes.

Decompression is done here, not by httpx: its decoders inflate a whole network read at once
(64 KiB of gzip can become 64 MiB before anyone counts). Here zlib is asked for at most a piece
at a time (`max_length`), so a gzip bomb stops at the cap. Only identity, gzip and deflate are
decoded; the clients ask for nothing else (`ACCEPT_ENCODING`), and an upstream that sends
another encoding anyway is refused rather than decoded without a bound.

Nothing here reads a whole body with `.read()`, `.json()` or `.text`: never add one.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Iterator

import httpx
from django.conf import settings

ACCEPT_ENCODING = "gzip, deflate"
PIECE = 64 * 1024  # the most zlib is asked to inflate at once
ERROR_HEAD_BYTES = 64 * 1024  # what is read of an error answer


class UpstreamUnreadable(Exception):
    """An upstream answer that is not read on: past a cap, or in an encoding not decoded here.
    The message is fit for the caller ("the upstream answer is larger than 8 MiB")."""


class UpstreamTooLarge(UpstreamUnreadable):
    pass


class UpstreamEncodingRefused(UpstreamUnreadable):
    pass


def answer_cap() -> int:
    """Decoded bytes of an answer read whole (JSON; THREADLESS_UPSTREAM_MAX_BYTES)."""
    return settings.THREADLESS_UPSTREAM_MAX_BYTES


def stream_cap() -> int:
    """Decoded bytes of one event stream (THREADLESS_UPSTREAM_STREAM_MAX_BYTES)."""
    return settings.THREADLESS_UPSTREAM_STREAM_MAX_BYTES


def frame_cap() -> int:
    """Bytes of one SSE frame (THREADLESS_UPSTREAM_FRAME_MAX_BYTES)."""
    return settings.THREADLESS_UPSTREAM_FRAME_MAX_BYTES


def size_text(n: int) -> str:
    if n >= 1024 * 1024 and n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} bytes"


def too_large(limit: int, what: str = "answer") -> UpstreamTooLarge:
    return UpstreamTooLarge(f"the upstream {what} is larger than {size_text(limit)}")


# --- decoding ------------------------------------------------------------------------------------


class BoundedDecoder:
    """Decodes one body's raw bytes (its Content-Encoding) and counts what comes out.

    `decode(raw)` yields decoded pieces of at most PIECE bytes and raises UpstreamTooLarge as
    soon as the total passes `limit`: the bytes past the cap are never produced.
    """

    def __init__(self, content_encoding: str | None, *, limit: int, what: str = "answer"):
        encodings = [e.strip().lower() for e in (content_encoding or "").split(",") if e.strip()]
        encodings = [e for e in encodings if e != "identity"]
        if len(encodings) > 1 or (encodings and encodings[0] not in ("gzip", "x-gzip", "deflate")):
            raise UpstreamEncodingRefused(
                "the upstream answered in a content encoding that is not accepted "
                f"({', '.join(encodings)[:60]})"
            )
        self.encoding = encodings[0] if encodings else "identity"
        self.limit = limit
        self.what = what
        self.total = 0
        self._zlib = None
        self._deflate_unsure = False  # zlib-wrapped, as the RFC says, until the first piece says raw
        if self.encoding in ("gzip", "x-gzip"):
            self._zlib = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif self.encoding == "deflate":
            self._zlib = zlib.decompressobj()
            self._deflate_unsure = True

    def _count(self, piece: bytes) -> bytes:
        self.total += len(piece)
        if self.total > self.limit:
            raise too_large(self.limit, self.what)
        return piece

    def _inflate(self, data: bytes) -> Iterator[bytes]:
        room = min(PIECE, self.limit - self.total + 1)
        try:
            piece = self._zlib.decompress(data, room)
        except zlib.error:
            if self._deflate_unsure:
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
                self._deflate_unsure = False
                yield from self._inflate(data)
                return
            raise UpstreamUnreadable("the upstream answer could not be decompressed") from None
        self._deflate_unsure = False
        while True:
            if piece:
                yield self._count(piece)
            tail = self._zlib.unconsumed_tail
            if not tail and len(piece) < room:
                return  # all input taken and nothing held back inside zlib
            room = min(PIECE, self.limit - self.total + 1)
            try:
                piece = self._zlib.decompress(tail, room)
            except zlib.error:
                raise UpstreamUnreadable("the upstream answer could not be decompressed") from None

    def decode(self, raw: bytes) -> Iterator[bytes]:
        if not raw:
            return
        if self._zlib is None:
            yield self._count(raw)
            return
        yield from self._inflate(raw)

    def flush(self) -> Iterator[bytes]:
        if self._zlib is not None:
            try:
                rest = self._zlib.flush()
            except zlib.error:
                raise UpstreamUnreadable("the upstream answer could not be decompressed") from None
            if rest:
                yield self._count(rest)


def iter_body(response: httpx.Response, *, limit: int, what: str = "answer") -> Iterator[bytes]:
    """Decoded pieces of a (streamed) response's body, raising UpstreamUnreadable past `limit`."""
    decoder = BoundedDecoder(response.headers.get("content-encoding"), limit=limit, what=what)
    for raw in response.iter_raw():
        yield from decoder.decode(raw)
    yield from decoder.flush()


async def aiter_body(response: httpx.Response, *, limit: int, what: str = "answer") -> AsyncIterator[bytes]:
    decoder = BoundedDecoder(response.headers.get("content-encoding"), limit=limit, what=what)
    async for raw in response.aiter_raw():
        for piece in decoder.decode(raw):
            yield piece
    for piece in decoder.flush():
        yield piece


def read_body(response: httpx.Response, *, limit: int | None = None) -> bytes:
    """The whole decoded body of a response opened with `client.stream(...)`, at most `limit`
    (default: answer_cap()) bytes."""
    return b"".join(iter_body(response, limit=answer_cap() if limit is None else limit))


async def aread_body(response: httpx.Response, *, limit: int | None = None) -> bytes:
    pieces = [p async for p in aiter_body(response, limit=answer_cap() if limit is None else limit)]
    return b"".join(pieces)


def read_head(response: httpx.Response, *, limit: int = ERROR_HEAD_BYTES) -> bytes:
    """Up to about `limit` decoded bytes of a body and no more (an error answer's text: enough for
    its message, never the rest of it); b"" for an encoding not decoded here."""
    pieces: list[bytes] = []
    try:
        for piece in iter_body(response, limit=limit):
            pieces.append(piece)
    except UpstreamUnreadable:
        pass
    return b"".join(pieces)


async def aread_head(response: httpx.Response, *, limit: int = ERROR_HEAD_BYTES) -> bytes:
    pieces: list[bytes] = []
    try:
        async for piece in aiter_body(response, limit=limit):
            pieces.append(piece)
    except UpstreamUnreadable:
        pass
    return b"".join(pieces)


# --- event streams -------------------------------------------------------------------------------


class SSEFramer:
    """Splits an event stream into frames (the bytes between blank lines) as pieces arrive.

    Each byte is scanned for the blank line once: a search resumes where the previous one
    stopped (one byte back, for a separator split across pieces), never from the start of the
    buffer. Line ends are normalised to LF (CRLF and lone CR, as the SSE format allows). What is
    held back is at most one unfinished frame, and a frame longer than `max_frame` is refused
    (UpstreamTooLarge) as soon as that many bytes have arrived without its blank line.
    `scanned` counts the bytes searched, so a test can see the work stays linear.
    """

    def __init__(self, *, max_frame: int | None = None):
        self.max_frame = frame_cap() if max_frame is None else max_frame
        self.scanned = 0
        self._buffer = bytearray()
        self._from = 0  # where the next search starts
        self._carriage = False  # the last piece ended with CR (maybe half of a CRLF)

    def _normalised(self, piece: bytes) -> bytes:
        if self._carriage:
            piece = b"\r" + piece
            self._carriage = False
        if piece.endswith(b"\r"):
            piece = piece[:-1]
            self._carriage = True
        if b"\r" in piece:
            piece = piece.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        return piece

    def feed(self, piece: bytes) -> list[bytes]:
        """The frames this piece completes (without their blank line; empty frames skipped)."""
        self._buffer += self._normalised(piece)
        frames: list[bytes] = []
        start = 0  # the unfinished frame's first byte
        search = self._from
        while True:
            end = self._buffer.find(b"\n\n", search)
            self.scanned += (end if end >= 0 else len(self._buffer)) - search
            if end < 0:
                break
            if end - start > self.max_frame:
                raise too_large(self.max_frame, "stream frame")
            if end > start:
                frames.append(bytes(self._buffer[start:end]))
            start = search = end + 2
        if start:
            del self._buffer[:start]  # what is left lies in this piece: linear over the stream
        if len(self._buffer) > self.max_frame:
            raise too_large(self.max_frame, "stream frame")
        self._from = max(len(self._buffer) - 1, 0)
        return frames

    def rest(self) -> bytes:
        """What is left at the end of the stream (a last frame without its blank line)."""
        if self._carriage:
            self._carriage = False
            self._buffer += b"\n"
        rest = bytes(self._buffer).strip(b"\n")
        self._buffer.clear()
        self._from = 0
        return rest


def sse_parse(frame: str) -> tuple[str, str]:
    """(event, data) of one SSE frame; comments and ids ignored."""
    event, data = "message", []
    for line in frame.split("\n"):
        if not line or line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    return event, "\n".join(data)


def iter_events(response: httpx.Response, *, limit: int | None = None) -> Iterator[tuple[str, str]]:
    """(event, data) of each SSE frame with data, read within stream_cap() and frame_cap()."""
    framer = SSEFramer()
    for piece in iter_body(response, limit=stream_cap() if limit is None else limit, what="stream"):
        for frame in framer.feed(piece):
            event, data = sse_parse(frame.decode("utf-8", "replace"))
            if data:
                yield event, data
    last = framer.rest()
    if last:
        event, data = sse_parse(last.decode("utf-8", "replace"))
        if data:
            yield event, data
