"""CPU per forward of three outbound HTTP clients, in one asyncio process, against a local stub.

What it measures: the client process's CPU time (`time.process_time`) per call of one forward the
way the proxy does it (`proxy.upstream` + `providers.bounded`): a POST of a ~300-byte JSON body on a
keep-alive pool, the answer's headers filtered, its raw body read in pieces counted against a cap,
the answer closed. Calls are sequential (one in flight), so the figure is the client's own cost per
call, with the event loop's share of it. Targets:

* `floor` — a bare asyncio protocol writing prebuilt request bytes and cutting the answer at its
  Content-Length (or the last chunk): the event loop and socket cost no client can go below.
* `httpx` — as `proxy.upstream` does it: an `httpx.Request` built per call (default headers under
  the call's, a timeout extension) sent on an `httpx.AsyncHTTPTransport` whose pool is an
  `httpcore.AsyncConnectionPool` with a pinned network backend; `aiter_raw()` read; `aclose()`.
* `httpcore` — the same pool called directly with an `httpcore.Request`, no `httpx.Response`.
* `aiohttp` — a `ClientSession` on a `TCPConnector` with a resolver that returns the checked
  address (how pinning would be done there), no env proxies, no redirects, no cookie jar, no
  decompression (providers.bounded decodes); `content.iter_any()` read; `release()`.

Every client asks for the host `stub.invalid`, which the pinning hook (the backend for httpcore,
the resolver for aiohttp) maps to 127.0.0.1 after a check, so each pays for its own hook; on a
keep-alive pool the hook runs once per connection, not per call.
The script imports nothing of the project (it runs in a venv of the clients alone, aiohttp being
no dependency of the service), so the httpx target's pinned backend restates the connect loop of
`providers.egress` / `proxy.upstream` rather than importing it.

The stub upstream runs in its own process (this script with `--serve`): a fixed ~600-byte chat
completion for `/json` and, for `/stream`, ~20 SSE frames in chunked encoding with a pause between
frames so that each frame is its own read.

Blocks of `--calls` calls per target are interleaved ABBA-style (the order reversed every other
round) for `--rounds` rounds, after a warm-up; the report gives, per target, the median and min–max
of the per-block CPU per call (µs), the median ratio to httpx's block in the same round, and the
median above the floor. Run with an environment that has the clients (not the project's venv):

    python3 -m venv /tmp/aio-venv && /tmp/aio-venv/bin/pip install aiohttp httpx httpcore anyio uvloop
    /tmp/aio-venv/bin/python bench/outbound_clients.py [--rounds 10] [--calls 300] [--stream] [--loop asyncio]

The loop defaults to uvloop when installed, as uvicorn's `--loop auto` picks it for the product.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time

HOST = "stub.invalid"
CAP = 8 * 1024 * 1024  # THREADLESS_UPSTREAM_MAX_BYTES' default order
FRAMES = 20

# --- the stub upstream ---------------------------------------------------------------------------

ANSWER = json.dumps(
    {
        "id": "chatcmpl-9x8Yz1AbCdEfGhIjKlMnOpQrStUv",
        "object": "chat.completion",
        "created": 1765000000,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "The capital of France is Paris. It has been the country's capital for most "
                    "of its history and is its largest city, on the Seine in the north of the country.",
                    "refusal": None,
                },
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 24, "completion_tokens": 38, "total_tokens": 62},
        "system_fingerprint": "fp_0123456789",
    }
).encode()
ANSWER_HEAD = (
    f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {len(ANSWER)}\r\n"
    "x-request-id: req_0123456789abcdef\r\nopenai-processing-ms: 312\r\nopenai-version: 2020-10-01\r\n"
    "x-ratelimit-remaining-requests: 9999\r\nx-ratelimit-remaining-tokens: 199950\r\n"
    "date: Sun, 06 Dec 2026 12:00:00 GMT\r\nserver: stub\r\n\r\n"
).encode()
STREAM_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
    b"x-request-id: req_0123456789abcdef\r\nopenai-processing-ms: 120\r\ncache-control: no-cache\r\n"
    b"date: Sun, 06 Dec 2026 12:00:00 GMT\r\nserver: stub\r\n\r\n"
)


def _frame(i: int) -> bytes:
    delta = {"content": f" word{i}"} if i < FRAMES - 1 else {}
    event = {
        "id": "chatcmpl-9x8Yz1AbCdEfGhIjKlMnOpQrStUv",
        "object": "chat.completion.chunk",
        "created": 1765000000,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None if delta else "stop"}],
    }
    data = b"data: " + json.dumps(event).encode() + b"\n\n"
    if i == FRAMES - 1:
        data += b"data: [DONE]\n\n"
    return b"%x\r\n%s\r\n" % (len(data), data)


STREAM_CHUNKS = [_frame(i) for i in range(FRAMES)]
CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:\s*(\d+)", re.I)


class Stub(asyncio.Protocol):
    def __init__(self, gap: float):
        self.gap = gap
        self.buf = b""
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            match = CONTENT_LENGTH.search(self.buf, 0, end + 2)
            size = int(match.group(1)) if match else 0
            if len(self.buf) < end + 4 + size:
                return
            path = self.buf.split(b" ", 2)[1]
            self.buf = self.buf[end + 4 + size :]
            if path == b"/stream":
                asyncio.ensure_future(self._stream())  # clients send one request at a time
            else:
                self.transport.write(ANSWER_HEAD + ANSWER)

    async def _stream(self):
        self.transport.write(STREAM_HEAD)
        for chunk in STREAM_CHUNKS:
            await asyncio.sleep(self.gap)
            self.transport.write(chunk)
        self.transport.write(b"0\r\n\r\n")


def serve(port: int, gap: float) -> None:
    async def main():
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: Stub(gap), "127.0.0.1", port)
        print("ready", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


# --- what every client shares ----------------------------------------------------------------------

REQUEST_BODY = json.dumps(
    {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant. Answer briefly."},
            {
                "role": "user",
                "content": "What is the capital of France, and since when has it been the capital?",
            },
        ],
        "temperature": 0.2,
        "max_tokens": 256,
    }
).encode()
DEFAULT_HEADERS = {  # proxy.upstream.DEFAULT_HEADERS
    "Accept": "*/*",
    "Accept-Encoding": "gzip, deflate",
    "Connection": "keep-alive",
    "User-Agent": "python-httpx/0.29.0",
}
CALL_HEADERS = {  # a forwarded header, the upstream's key, the content type (proxy.views._forward)
    "OpenAI-Organization": "org-0123456789",
    "Authorization": "Bearer sk-test-0123456789abcdef0123456789abcdef",
    "Content-Type": "application/json",
}
BACK_PREFIXES = ("x-request-id", "openai-", "x-ratelimit-", "anthropic-", "request-id", "retry-after")
TIMEOUT = {"connect": 10.0, "read": 600.0, "write": 600.0, "pool": 5.0}


def checked_addresses(host: str, port: int) -> list:
    """The egress check's stand-in: the stub's name maps to loopback, anything else is refused."""
    if host != HOST:
        raise OSError(f"egress refused: {host}")
    address = ipaddress.ip_address("127.0.0.1")
    if address.version == 6 and address.ipv4_mapped:
        address = address.ipv4_mapped
    return [address]


def back_headers(items) -> dict:
    out = {}
    for name, value in items:
        if name.lower().startswith(BACK_PREFIXES):
            out[name] = value
    return out


class Counted:
    """providers.bounded's identity path: raw pieces counted against the cap."""

    __slots__ = ("total", "pieces")

    def __init__(self):
        self.total = 0
        self.pieces = []

    def add(self, piece: bytes) -> None:
        self.total += len(piece)
        if self.total > CAP:
            raise ValueError("the upstream answer is larger than the cap")
        self.pieces.append(piece)


# --- the targets -------------------------------------------------------------------------------------


class Floor:
    """A bare protocol: prebuilt request bytes out, the answer cut at Content-Length / last chunk."""

    name = "floor"

    def __init__(self, port: int):
        self.port = port
        self.head = {
            path: (
                f"POST {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
                + "".join(f"{k}: {v}\r\n" for k, v in {**DEFAULT_HEADERS, **CALL_HEADERS}.items())
                + f"Content-Length: {len(REQUEST_BODY)}\r\n\r\n"
            ).encode()
            + REQUEST_BODY
            for path in ("/json", "/stream")
        }
        self.transport = None
        self.protocol = None

    class _Proto(asyncio.Protocol):
        def __init__(self):
            self.buf = b""
            self.waiter = None
            self.chunked = False
            self.counted = None

        def data_received(self, data):
            self.counted.add(data)
            self.buf += data
            head_end = self.buf.find(b"\r\n\r\n")
            if head_end < 0:
                return
            if self.chunked:
                done = self.buf.endswith(b"\r\n0\r\n\r\n")
            else:
                match = CONTENT_LENGTH.search(self.buf, 0, head_end + 2)
                done = match is not None and len(self.buf) >= head_end + 4 + int(match.group(1))
            if done and not self.waiter.done():
                self.waiter.set_result(self.buf[:head_end])

    async def call(self, path: str) -> int:
        loop = asyncio.get_running_loop()
        if self.transport is None:
            (address,) = checked_addresses(HOST, self.port)
            self.transport, self.protocol = await loop.create_connection(self._Proto, str(address), self.port)
        proto = self.protocol
        proto.buf = b""
        proto.chunked = path == "/stream"
        proto.counted = Counted()
        proto.waiter = loop.create_future()
        self.transport.write(self.head[path])
        head = await proto.waiter
        back_headers(
            tuple(line.split(": ", 1)) for line in head.decode("latin-1").split("\r\n")[1:] if ": " in line
        )
        return proto.counted.total

    async def close(self):
        if self.transport is not None:
            self.transport.close()


class Httpx:
    """proxy.upstream: httpx.Request per call on the pinned AsyncHTTPTransport."""

    name = "httpx"

    def __init__(self, port: int):
        import httpcore
        import httpx

        self.httpx = httpx

        class PinnedBackend(httpcore.AsyncNetworkBackend):
            def __init__(self):
                self._backend = httpcore.AnyIOBackend()

            async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
                last = None
                for address in checked_addresses(host, port):
                    try:
                        return await self._backend.connect_tcp(
                            str(address),
                            port,
                            timeout=timeout,
                            local_address=local_address,
                            socket_options=socket_options,
                        )
                    except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                        last = exc
                raise last

            async def sleep(self, seconds):
                await self._backend.sleep(seconds)

        class PinnedTransport(httpx.AsyncHTTPTransport):
            def __init__(self, *, limits):
                super().__init__(limits=limits, trust_env=False)
                self._pool = httpcore.AsyncConnectionPool(
                    max_connections=limits.max_connections,
                    max_keepalive_connections=limits.max_keepalive_connections,
                    keepalive_expiry=limits.keepalive_expiry,
                    network_backend=PinnedBackend(),
                )

        self.transport = PinnedTransport(
            limits=httpx.Limits(max_connections=200, max_keepalive_connections=40)
        )
        self.urls = {path: httpx.URL(f"http://{HOST}:{port}{path}") for path in ("/json", "/stream")}

    async def call(self, path: str) -> int:
        request = self.httpx.Request(
            "POST",
            self.urls[path],
            content=REQUEST_BODY,
            headers={**DEFAULT_HEADERS, **CALL_HEADERS},
            extensions={"timeout": TIMEOUT},
        )
        response = await self.transport.handle_async_request(request)
        response.request = request
        try:
            back_headers(response.headers.items())
            response.headers.get("content-type")
            counted = Counted()
            async for raw in response.aiter_raw():
                counted.add(raw)
            return counted.total
        finally:
            await response.aclose()

    async def close(self):
        await self.transport.aclose()


class Httpcore(Httpx):
    """The same pinned pool, called with an httpcore.Request; no httpx.Response."""

    name = "httpcore"

    def __init__(self, port: int):
        super().__init__(port)
        import httpcore

        self.httpcore = httpcore
        self.pool = self.transport._pool
        self.core_urls = {path: httpcore.URL(f"http://{HOST}:{port}{path}") for path in ("/json", "/stream")}
        self.host = f"{HOST}:{port}".encode()

    async def call(self, path: str) -> int:
        headers = [(b"Host", self.host)]
        headers += [(k.encode(), v.encode()) for k, v in {**DEFAULT_HEADERS, **CALL_HEADERS}.items()]
        headers.append((b"Content-Length", str(len(REQUEST_BODY)).encode()))
        request = self.httpcore.Request(
            b"POST",
            self.core_urls[path],
            headers=headers,
            content=REQUEST_BODY,
            extensions={"timeout": TIMEOUT},
        )
        response = await self.pool.handle_async_request(request)
        try:
            back_headers((k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers)
            counted = Counted()
            async for raw in response.stream:
                counted.add(raw)
            return counted.total
        finally:
            await response.aclose()


class Aiohttp:
    """A ClientSession on a TCPConnector whose resolver returns the checked address."""

    name = "aiohttp"

    def __init__(self, port: int):
        import aiohttp
        import yarl

        class PinnedResolver(aiohttp.abc.AbstractResolver):
            async def resolve(self, host, port=0, family=socket.AF_INET):
                return [
                    {
                        "hostname": host,  # TLS server name and certificate check: the URL's host
                        "host": str(address),
                        "port": port,
                        "family": socket.AF_INET if address.version == 4 else socket.AF_INET6,
                        "proto": 0,
                        "flags": socket.AI_NUMERICHOST,
                    }
                    for address in checked_addresses(host, port)
                ]

            async def close(self):
                pass

        self.aiohttp = aiohttp
        self.connector = aiohttp.TCPConnector(
            resolver=PinnedResolver(),
            limit=200,
            limit_per_host=0,
            keepalive_timeout=5.0,
            use_dns_cache=False,  # every new connection goes through the check
        )
        self.session = aiohttp.ClientSession(
            connector=self.connector,
            trust_env=False,
            auto_decompress=False,
            cookie_jar=aiohttp.DummyCookieJar(),
            skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
        )
        self.timeout = aiohttp.ClientTimeout(total=None, connect=10.0, sock_read=600.0)
        self.urls = {path: yarl.URL(f"http://{HOST}:{port}{path}") for path in ("/json", "/stream")}

    async def call(self, path: str) -> int:
        response = await self.session.request(
            "POST",
            self.urls[path],
            data=REQUEST_BODY,
            headers={**DEFAULT_HEADERS, **CALL_HEADERS},
            allow_redirects=False,
            timeout=self.timeout,
        )
        try:
            back_headers(response.headers.items())
            response.headers.get("content-type")
            counted = Counted()
            async for raw in response.content.iter_any():
                counted.add(raw)
            return counted.total
        finally:
            response.release()

    async def close(self):
        await self.session.close()


# --- the run -------------------------------------------------------------------------------------------


async def block(target, path: str, calls: int) -> tuple[float, float]:
    """CPU and wall µs per call over `calls` sequential calls."""
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(calls):
        await target.call(path)
    return (time.process_time() - cpu) / calls * 1e6, (time.perf_counter() - wall) / calls * 1e6


def summary(samples: dict, base: str = "httpx") -> list[str]:
    names = list(samples)
    lines = [
        f"{'target':10} {'CPU µs/call med':>16} {'min–max':>15} {'÷ httpx (med)':>14} {'− floor (med)':>14}"
    ]
    for name in names:
        cpu = [s[0] for s in samples[name]]
        ratios = [a[0] / b[0] for a, b in zip(samples[name], samples[base], strict=True)]
        above = (
            [a[0] - f[0] for a, f in zip(samples[name], samples["floor"], strict=True)]
            if "floor" in samples
            else []
        )
        lines.append(
            f"{name:10} {statistics.median(cpu):16.0f} {min(cpu):7.0f}–{max(cpu):<7.0f} "
            f"{statistics.median(ratios):14.2f} {statistics.median(above) if above else 0:14.0f}"
        )
    return lines


async def measure(port: int, args) -> None:
    targets = [cls(port) for cls in (Floor, Httpx, Httpcore, Aiohttp)]
    for target in targets:  # the same answer through each, then the warm-up
        sizes = {path: await target.call(path) for path in ("/json", "/stream")}
        assert target.name == "floor" or sizes["/json"] == len(ANSWER), sizes  # the floor counts the head too
        print(f"# {target.name}: json {sizes['/json']} B, stream {sizes['/stream']} B", flush=True)
        await block(target, "/json", args.calls)
    cases = [("/json", args.calls)] + ([("/stream", args.stream_calls)] if args.stream else [])
    for path, calls in cases:
        samples = {t.name: [] for t in targets}
        for round_ in range(args.rounds):
            order = targets if round_ % 2 == 0 else targets[::-1]
            for target in order:
                samples[target.name].append(await block(target, path, calls))
        print(f"\n## {path}: {args.rounds} rounds × {calls} calls per block, load {os.getloadavg()}")
        print("\n".join(summary(samples)))
        wall = {n: statistics.median(s[1] for s in v) for n, v in samples.items()}
        print("wall µs/call (median): " + ", ".join(f"{n} {w:.0f}" for n, w in wall.items()))
    for target in targets:
        await target.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=300, help="JSON calls per block")
    parser.add_argument("--stream", action="store_true", help="also the SSE case")
    parser.add_argument("--stream-calls", type=int, default=40, help="stream calls per block")
    parser.add_argument("--gap", type=float, default=0.001, help="seconds between the stub's frames")
    parser.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop")
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.gap)
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    stub = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(port), "--gap", str(args.gap)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        stub.stdout.readline()
        loop = args.loop
        if loop == "uvloop":
            try:
                import uvloop
            except ImportError:
                loop = "asyncio"
        import aiohttp
        import httpcore
        import httpx

        print(
            f"# python {sys.version.split()[0]}, loop {loop}, httpx {httpx.__version__}, "
            f"httpcore {httpcore.__version__}, aiohttp {aiohttp.__version__}, load {os.getloadavg()}"
        )
        if loop == "uvloop":
            uvloop.run(measure(port, args))
        else:
            asyncio.run(measure(port, args))
    finally:
        stub.terminate()
        stub.wait()


if __name__ == "__main__":
    main()
