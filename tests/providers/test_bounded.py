"""Bounded reads of upstream answers: decoding within a cap (a gzip bomb stops at it) and SSE
framing that scans each byte once, whatever the pieces look like."""

from __future__ import annotations

import gzip
import zlib

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from providers.bounded import (
    PIECE,
    BoundedDecoder,
    SSEFramer,
    UpstreamEncodingRefused,
    UpstreamTooLarge,
    read_body,
    read_head,
    sse_parse,
)

MiB = 1024 * 1024


def _bomb(decoded_mib: int) -> bytes:
    return gzip.compress(b"\0" * (decoded_mib * MiB), compresslevel=9)


def _response(raw: bytes, encoding: str | None, piece: int = 65536) -> httpx.Response:
    """A response whose raw body arrives in network-sized pieces, as from a socket."""
    headers = {"Content-Encoding": encoding} if encoding else {}
    return httpx.Response(
        200, headers=headers, stream=httpx.ByteStream(raw) if piece >= len(raw) else _Pieces(raw, piece)
    )


class _Pieces(httpx.SyncByteStream):
    def __init__(self, raw: bytes, piece: int):
        self.raw, self.piece = raw, piece

    def __iter__(self):
        for i in range(0, len(self.raw), self.piece):
            yield self.raw[i : i + self.piece]


def test_a_gzip_bomb_is_stopped_at_the_cap_and_no_piece_is_larger_than_a_piece():
    bomb = _bomb(64)
    decoder = BoundedDecoder("gzip", limit=2 * MiB)
    seen = []
    with pytest.raises(UpstreamTooLarge, match="larger than 2 MiB"):
        for raw in (bomb[i : i + 65536] for i in range(0, len(bomb), 65536)):
            for piece in decoder.decode(raw):
                seen.append(len(piece))
    assert max(seen) <= PIECE
    assert sum(seen) <= 2 * MiB  # the bytes past the cap were never produced
    assert decoder.total <= 2 * MiB + PIECE


def test_an_answer_within_the_cap_decodes_whole_in_every_encoding():
    body = b'{"ok": true, "text": "' + b"x" * 300_000 + b'"}'
    raw_deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    encoded = {
        None: body,
        "identity": body,
        "gzip": gzip.compress(body),
        "x-gzip": gzip.compress(body),
        "deflate": zlib.compress(body),  # zlib-wrapped, as the RFC says
        "Deflate": raw_deflate.compress(body) + raw_deflate.flush(),  # raw, as some servers send
    }
    for encoding, raw in encoded.items():
        assert read_body(_response(raw, encoding, piece=1000), limit=MiB) == body, encoding


def test_an_answer_past_the_cap_is_refused_and_an_error_head_is_cut_quietly():
    with pytest.raises(UpstreamTooLarge):
        read_body(_response(b"y" * (MiB + 1), None), limit=MiB)
    assert read_body(_response(b"y" * MiB, None), limit=MiB) == b"y" * MiB  # exactly the cap is fine
    head = read_head(_response(_bomb(16), "gzip"), limit=64 * 1024)
    assert 0 < len(head) <= 64 * 1024


def test_encodings_that_are_not_decoded_here_are_refused_not_decoded_without_a_bound():
    for encoding in ("br", "zstd", "gzip, gzip", "compress"):
        with pytest.raises(UpstreamEncodingRefused):
            BoundedDecoder(encoding, limit=MiB)
    assert BoundedDecoder("identity, gzip", limit=MiB).encoding == "gzip"


def test_a_corrupt_gzip_body_is_unreadable_not_a_crash():
    from providers.bounded import UpstreamUnreadable

    with pytest.raises(UpstreamUnreadable, match="decompressed"):
        read_body(_response(b"\x1f\x8b\x08\x00garbage-not-gzip" * 10, "gzip"), limit=MiB)


def _frames(pieces: list[bytes], **kwargs) -> list[tuple[str, str]]:
    framer = SSEFramer(**kwargs)
    out = []
    for piece in pieces:
        out += framer.feed(piece)
    if rest := framer.rest():
        out.append(rest)
    return [sse_parse(f.decode()) for f in out]


def test_frames_survive_piece_boundaries_and_every_line_ending():
    text = b'data: {"a": 1}\r\n\r\ndata: {"b": 2}\n\nevent: x\rdata: y\r\r: comment\n\ndata: last'
    expected = [
        ("message", '{"a": 1}'),
        ("message", '{"b": 2}'),
        ("x", "y"),
        ("message", ""),
        ("message", "last"),
    ]
    assert _frames([text]) == expected
    for cut in range(1, len(text)):  # a CRLF or a blank line split between two pieces
        assert _frames([text[:cut], text[cut:]]) == expected, cut
    assert _frames([bytes([b]) for b in text]) == expected


@given(
    st.lists(st.sampled_from([b"data: ab", b"\n", b"\r\n", b"\r", b"event: e", b"\n\n", b"x"]), max_size=40),
    st.integers(min_value=1, max_value=7),
)
def test_framing_does_not_depend_on_how_the_bytes_are_cut(parts, size):
    text = b"".join(parts)
    whole = _frames([text])
    assert _frames([text[i : i + size] for i in range(0, len(text), size)]) == whole


def test_a_long_stream_without_a_blank_line_is_scanned_once_and_refused_at_the_frame_cap():
    framer = SSEFramer(max_frame=4 * MiB)
    piece = b"data: " + b"A" * (64 * 1024 - 6)
    fed = 0
    with pytest.raises(UpstreamTooLarge, match="stream frame is larger than 4 MiB"):
        for _ in range(32 * 16):  # 32 MiB on offer
            fed += len(piece)
            framer.feed(piece)
    assert fed <= 4 * MiB + len(piece)  # refused as soon as the frame passed the cap
    assert framer.scanned <= fed + 32 * 16  # each byte searched once (one byte back per piece)


def test_many_small_frames_are_scanned_once():
    framer = SSEFramer(max_frame=MiB)
    frame = b'data: {"choices": [{"delta": {"content": "hi"}}]}\n\n'
    stream = frame * 20_000
    frames = 0
    for i in range(0, len(stream), 1000):
        frames += len(framer.feed(stream[i : i + 1000]))
    assert frames == 20_000
    assert framer.scanned <= len(stream) + len(stream) // 1000 + 1


READ_WHOLE = {"read", "aread", "json"}  # a whole body in memory, however large
STREAM_METHODS = {
    "iter_bytes",
    "aiter_bytes",
    "iter_text",
    "aiter_text",
    "iter_lines",
    "aiter_lines",
    "iter_raw",
    "aiter_raw",
}
APP_PACKAGES = ("common", "projects", "providers", "memories", "chat", "proxy", "console", "threadless_site")


def test_no_app_module_reads_an_upstream_body_past_the_caps():
    """Every upstream body is read through providers.bounded: nothing calls `.read()`, `.aread()`
    or `.json()` on a response, reads its `.content` / `.text`, or iterates it by httpx's own
    decoders (which inflate a network read whole)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    found = []
    for package in APP_PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            if path == root / "providers" / "bounded.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if not isinstance(node, ast.Attribute):
                    continue
                on_response = isinstance(node.value, ast.Name) and node.value.id.endswith("response")
                if node.attr in STREAM_METHODS or (
                    on_response and node.attr in READ_WHOLE | {"content", "text"}
                ):
                    found.append(f"{path.relative_to(root)}:{node.lineno} .{node.attr}")
    assert found == []
