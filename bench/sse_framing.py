"""Splitting an upstream event stream into frames (providers.bounded.SSEFramer), against a floor.

    .venv/bin/python -m bench.sse_framing

* Throughput: an OpenAI-shaped stream (20,000 chunk frames, ~4 MiB) fed in 1 KiB and 16 KiB
  pieces, framed and parsed, against the floor of one `bytes.find` pass over the same bytes per
  piece (the least any splitter must do: look at each byte once).
* The attack shape: 1, 2, 4 MiB without a blank line, fed in 64 KiB pieces. Linear framing costs
  twice as much for twice the bytes; the old re-scan of the whole buffer cost four times as much.
"""

from __future__ import annotations

import json
import time

from providers.bounded import SSEFramer, UpstreamTooLarge, sse_parse

MiB = 1024 * 1024


def _best(run, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def _chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)]


def throughput(piece: int) -> tuple[float, float]:
    frame = "data: " + json.dumps({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": {"content": "word "}, "finish_reason": None}]}) + "\n\n"
    stream = frame.encode() * 20_000
    pieces = _chunks(stream, piece)

    def framed():
        framer = SSEFramer(max_frame=4 * MiB)
        for p in pieces:
            for f in framer.feed(p):
                sse_parse(f.decode())

    def floor():
        for p in pieces:
            p.find(b"\n\n")
            p.decode()

    mb = len(stream) / MiB
    return mb / _best(framed), mb / _best(floor)


def endless(mib: int) -> float:
    pieces = _chunks(b"data: " + b"A" * (mib * MiB), 64 * 1024)

    def run():
        framer = SSEFramer(max_frame=64 * MiB)
        for p in pieces:
            framer.feed(p)

    return _best(run)


def main() -> None:
    for piece in (1024, 16 * 1024):
        framed, floor = throughput(piece)
        print(f"{piece // 1024:>2} KiB pieces: framed + parsed {framed:7.1f} MiB/s, floor {floor:7.1f} MiB/s, "
              f"{floor / framed:.1f}× the floor")
    times = {mib: endless(mib) for mib in (1, 2, 4)}
    print("no blank line: " + ", ".join(f"{mib} MiB {t * 1000:.2f} ms" for mib, t in times.items())
          + f"; 4 MiB / 1 MiB = {times[4] / times[1]:.1f}× (linear: 4×, the old re-scan: 16×)")
    framer = SSEFramer()
    try:
        for p in _chunks(b"data: " + b"A" * (32 * MiB), 64 * 1024):
            framer.feed(p)
    except UpstreamTooLarge as exc:
        print(f"32 MiB without a blank line at the default frame cap: refused after {framer.scanned / MiB:.1f} MiB "
              f"scanned ({exc})")


if __name__ == "__main__":
    main()
