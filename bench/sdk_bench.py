"""Python SDK figures: its own overhead per decorate, and how fast decorate falls back.

    .venv/bin/python bench/sdk_bench.py            # prints a small Markdown table
    .venv/bin/python bench/sdk_bench.py --live URL KEY   # also against a running Threadless server

* overhead: the same decorate request sent with a bare ``httpx.Client`` and through
  ``Threadless.decorate`` against a local stub server (a real socket answering a canned
  60-message decorated request); the difference of the medians is the SDK's own work (body
  encoding, the I/O-thread hop that enforces the total deadline, answer checks, the tail refresh).
* fallback on a refused connection (nothing listens on the port) and on a server that accepts
  and never answers, with ``timeout=1``.

``run()`` returns the figures as a dict, for ``bench/run.py`` to reuse.
"""

from __future__ import annotations

import argparse
import json
import socket
import socketserver
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "sdk" / "python"))

import httpx  # noqa: E402
from threadless import Threadless  # noqa: E402

NEW = [{"role": "user", "content": "What did I tell you about my dog?"}]
HISTORY = [
    {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " + "lorem ipsum " * 20}
    for i in range(60)
]
ANSWER = json.dumps(
    {
        "memory_id": "mem_bench",
        "turn": 31,
        "instructions": "Be kind.\n\n## What you know\n- The user has a beagle.",
        "context_text": "## What you know\n- The user has a beagle.",
        "messages": HISTORY + NEW,
        "context": {"facts": [], "recalled": [], "digests": [], "summary": ""},
        "usage": {
            "instructions_tokens": 10,
            "history_tokens": 4000,
            "new_tokens": 12,
            "dropped_messages": 0,
            "recalled": 0,
        },
    }
).encode()


class _Stub(socketserver.StreamRequestHandler):
    """HTTP/1.1 keep-alive: read a request, answer the canned decorate (or hang)."""

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def handle(self) -> None:
        while True:
            line = self.rfile.readline()
            if not line:
                return
            length = 0
            while True:
                header = self.rfile.readline()
                if header in (b"\r\n", b"\n", b""):
                    break
                if header.lower().startswith(b"content-length:"):
                    length = int(header.split(b":", 1)[1])
            self.rfile.read(length)
            if self.server.hang:  # type: ignore[attr-defined]
                self.server.stop.wait(60)  # type: ignore[attr-defined]
                return
            self.wfile.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                + str(len(ANSWER)).encode()
                + b"\r\n\r\n"
                + ANSWER
            )


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def _serve(hang: bool = False) -> _Server:
    server = _Server(("127.0.0.1", 0), _Stub)
    server.hang = hang  # type: ignore[attr-defined]
    server.stop = threading.Event()  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def overhead(url: str, key: str, memory_id: str, n: int = 1500) -> dict:
    """Median time of a bare httpx call and of Threadless.decorate, interleaved; ms."""
    body = json.dumps({"messages": NEW}).encode()
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    raw_samples, sdk_samples = [], []
    errors: list = []
    with (
        httpx.Client(base_url=url + "/v1", timeout=15) as raw,
        Threadless(api_key=key, base_url=url, on_error=lambda e, c: errors.append(e)) as memory,
    ):
        path = f"/memories/{memory_id}/decorate"
        for _ in range(50):  # warm both connection pools
            raw.post(path, content=body, headers=headers).json()
            memory.decorate(memory_id, NEW)
        for _ in range(n):
            t = time.perf_counter()
            raw.post(path, content=body, headers=headers).json()
            raw_samples.append(time.perf_counter() - t)
            t = time.perf_counter()
            memory.decorate(memory_id, NEW)
            sdk_samples.append(time.perf_counter() - t)
        # Paired within each call (far less noisy on a busy machine): decorate's time minus the
        # time spent inside httpx's request (which includes reading the body), minus JSON decoding.
        # The CPU-time variant (this thread's CPU only) is immune to being descheduled on a busy box.
        inner: list[tuple[float, float]] = []
        request = memory._http.request

        last: list = [b""]

        def timed(*args, **kwargs):
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                response = request(*args, **kwargs)
                last[0] = response.content
                return response
            finally:
                inner.append((time.perf_counter() - t0, time.thread_time() - c0))

        memory._http.request = timed
        own, own_cpu, decode = [], [], []
        for _ in range(n):
            t, c = time.perf_counter(), time.thread_time()
            memory.decorate(memory_id, NEW)
            wall, cpu = time.perf_counter() - t, time.thread_time() - c
            own.append(wall - inner[-1][0])
            own_cpu.append(cpu - inner[-1][1])
        for _ in range(200):  # decoding the last answer, which the SDK's own work includes
            t = time.perf_counter()
            json.loads(last[0])
            decode.append(time.perf_counter() - t)
        answer_messages = len(json.loads(last[0])["messages"])
    if errors:
        raise RuntimeError(f"decorate fell back during the overhead run: {errors[0]}")
    raw_ms, sdk_ms = _median_ms(raw_samples), _median_ms(sdk_samples)
    return {
        "http_ms": raw_ms,
        "sdk_ms": sdk_ms,
        "overhead_ms": sdk_ms - raw_ms,
        "n": n,
        "own_work_ms": _median_ms(own),
        "own_work_p90_ms": sorted(own)[int(len(own) * 0.9)] * 1000,
        "own_cpu_ms": _median_ms(own_cpu),
        "own_cpu_p90_ms": sorted(own_cpu)[int(len(own_cpu) * 0.9)] * 1000,
        "json_decode_ms": _median_ms(decode),
        "answer_messages": answer_messages,
        "answer_bytes": len(last[0]),
    }


def fallback_refused(n: int = 200) -> dict:
    url = f"http://127.0.0.1:{_free_port()}"
    samples = []
    with Threadless(api_key="k", base_url=url, timeout=1, on_error=lambda e, c: None) as memory:
        for _ in range(n):
            t = time.perf_counter()
            assert memory.decorate("mem_bench", NEW).degraded
            samples.append(time.perf_counter() - t)
    return {"median_ms": _median_ms(samples), "max_ms": max(samples) * 1000, "n": n}


def fallback_hanging(n: int = 5, timeout: float = 1.0) -> dict:
    server = _serve(hang=True)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    samples = []
    try:
        with Threadless(api_key="k", base_url=url, timeout=timeout, on_error=lambda e, c: None) as memory:
            for _ in range(n):
                t = time.perf_counter()
                assert memory.decorate("mem_bench", NEW).degraded
                samples.append(time.perf_counter() - t)
    finally:
        server.stop.set()  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()
    return {"timeout_s": timeout, "median_ms": _median_ms(samples), "max_ms": max(samples) * 1000, "n": n}


def run(live: tuple[str, str] | None = None) -> dict:
    stub = _serve()
    try:
        results = {"overhead_stub": overhead(f"http://127.0.0.1:{stub.server_address[1]}", "k", "mem_bench")}
    finally:
        stub.shutdown()
        stub.server_close()
    if live:
        url, key = live
        with Threadless(api_key=key, base_url=url) as memory:
            memory_id = memory.create(metadata={"bench": "sdk"}).id
        results["overhead_live"] = overhead(url, key, memory_id, n=200)
    results["fallback_refused"] = fallback_refused()
    results["fallback_hanging"] = fallback_hanging()
    return results


def markdown(results: dict | None = None) -> str:
    """A Markdown section with the figures (runs the measurements when none are given; bench/run.py)."""
    if results is None:
        results = run()
    lines = [
        "### Python SDK figures",
        "",
        "Measured by `bench/sdk_bench.py`: the SDK's own work per decorate (everything but the HTTP",
        "exchange, paired per call), and how long decorate takes to fall back to the local tail.",
        "",
        "| Python SDK | figure |",
        "|---|---|",
    ]
    for name, label in [
        ("overhead_stub", "stub server, 61-message answer"),
        ("overhead_live", "live server"),
    ]:
        r = results.get(name)
        if r:
            lines.append(
                f"| decorate vs the same request with bare httpx ({label}; a difference of two "
                f"medians, noisy on a busy machine) | {r['overhead_ms']:.3f} ms "
                f"(SDK {r['sdk_ms']:.3f} ms vs bare httpx {r['http_ms']:.3f} ms, median of {r['n']}) |"
            )
            size = f"answer of {r['answer_messages']} messages, {r['answer_bytes'] / 1024:.0f} KiB"
            lines.append(
                f"| SDK's own work per decorate, paired per call ({label}) | {r['own_work_ms']:.3f} ms "
                f"median, {r['own_work_p90_ms']:.3f} ms p90 (includes decoding the JSON answer: "
                f"{r['json_decode_ms']:.3f} ms for the last, {size}) |"
            )
            lines.append(
                f"| SDK's own CPU time per decorate, paired per call ({label}) | {r['own_cpu_ms']:.3f} ms "
                f"median, {r['own_cpu_p90_ms']:.3f} ms p90 (the same counting only this thread's CPU; "
                f"{r['own_cpu_ms'] - r['json_decode_ms']:.3f} ms without JSON decoding) |"
            )
    r = results["fallback_refused"]
    lines.append(
        f"| time to fallback, connection refused | {r['median_ms']:.2f} ms median, "
        f"{r['max_ms']:.2f} ms max (n={r['n']}) |"
    )
    r = results["fallback_hanging"]
    lines.append(
        f"| time to fallback, hanging server, timeout={r['timeout_s']:g} | {r['median_ms']:.0f} ms median, "
        f"{r['max_ms']:.0f} ms max (n={r['n']}) |"
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--live", nargs=2, metavar=("URL", "KEY"), help="also measure against a running server"
    )
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    args = parser.parse_args()
    results = run(tuple(args.live) if args.live else None)
    print(json.dumps(results, indent=2) if args.json else markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
