"""The provider-compatible proxy's added latency (SPEC 4.8) for docs/benchmarks.md.

Same run, same stub upstream (a real socket, harness/proxy_stubs.py), interleaved round by round in
a shuffled order, for both OpenAI routes (Chat Completions and Responses): the stub called directly, through
the proxy without memory (`X-Threadless-Memory: none`: only forwarding), and through the proxy with
memory (decorate + forward + report through the outbox). Time to first token (the first content
chunk or `response.output_text.delta` of a stream) and total, streaming and not. Raw HTTP (httpx,
one keep-alive connection per target), so no client SDK's own time is in the figures.

Besides wall time, the Threadless server's own CPU time per call (its process's user + system time
from /proc, blocks of calls per target, the blocks interleaved): on a shared, loaded machine the
wall-time figures swing by tens of milliseconds, the CPU a call costs the server far less.

Run alone: `.venv/bin/python -m bench.proxy_bench` (starts its own server).
"""

from __future__ import annotations

import os
import random
import sys
import time
import uuid
from pathlib import Path

import httpx

from bench.common import ROOT, quantile
from bench.django_setup import setup

ROUNDS = 40
WARMUP = 3
ROUTES = ("chat/completions", "responses")
TARGETS = ("direct", "proxy, no memory", "proxy, with memory")
DECORATE_REPORT = "decorate + report"  # server_cpu's key for one turn over the hot API
ORDER_SEED = 6  # the calls of each round run in a shuffled order; fixed, so runs are comparable


def _is_first_token(line: str) -> bool:
    squeezed = line.replace(" ", "")
    if '"type":"response.output_text.delta"' in squeezed:  # Responses: the first text delta
        return True
    return '"content":"' in squeezed and '"content":""' not in squeezed  # Chat Completions


def _call(client: httpx.Client, url: str, headers: dict, body: dict) -> tuple[float, float]:
    """(time to first token, total) in ms for one call."""
    start = time.perf_counter()
    if not body.get("stream"):
        answer = client.post(url, json=body, headers=headers)
        answer.raise_for_status()
        total = (time.perf_counter() - start) * 1000
        return total, total
    first = None
    with client.stream("POST", url, json=body, headers=headers) as answer:
        answer.raise_for_status()
        for line in answer.iter_lines():
            if first is None and _is_first_token(line):
                first = (time.perf_counter() - start) * 1000
    total = (time.perf_counter() - start) * 1000
    return first if first is not None else total, total


def _body(route: str, i: int, stream: bool) -> dict:
    question = f"Question number {i}?"
    body = (
        {"model": "bench", "messages": [{"role": "user", "content": question}]}
        if route == "chat/completions"
        else {"model": "bench", "input": question}
    )
    if stream:
        body["stream"] = True
    return body


def _targets(url: str, key: str, stub) -> dict:
    proxied = {
        "Authorization": f"Bearer {key}",
        "X-Upstream-Base-Url": stub.openai_url,
        "X-Upstream-Authorization": "sk-bench",
    }
    targets = {}
    for route in ROUTES:
        memory_user = "bench-" + uuid.uuid4().hex[:8]  # one memory per route
        targets[(route, "direct")] = (f"{stub.openai_url}/{route}", {"Authorization": "Bearer sk-bench"})
        targets[(route, "proxy, no memory")] = (
            f"{url}/v1/openai/{route}",
            {**proxied, "X-Threadless-Memory": "none"},
        )
        targets[(route, "proxy, with memory")] = (
            f"{url}/v1/openai/{route}",
            {**proxied, "X-Threadless-External-Id": memory_user},
        )
    return targets


def run(url: str, key: str, stub, rounds: int = ROUNDS) -> dict:
    targets = _targets(url, key, stub)
    clients = {name: httpx.Client(timeout=30) for name in targets}
    samples: dict[tuple, list[tuple[float, float]]] = {(*t, s): [] for t in targets for s in (False, True)}
    try:
        order = random.Random(ORDER_SEED)
        for i in range(WARMUP + rounds):
            # a new order each round: no target always follows the one whose work the server may
            # still be finishing (a with-memory call's commit and queued background work)
            calls = [(key, stream) for key in targets for stream in (False, True)]
            order.shuffle(calls)
            for (route, name), stream in calls:
                target, headers = targets[(route, name)]
                measured = _call(clients[(route, name)], target, headers, _body(route, i, stream))
                if i >= WARMUP:
                    samples[(route, name, stream)].append(measured)
    finally:
        for client in clients.values():
            client.close()
    out: dict = {}
    for (route, name, stream), values in samples.items():
        ttft = [v[0] for v in values]
        total = [v[1] for v in values]
        out[f"{route}|{name}|{'stream' if stream else 'json'}"] = {
            "ttft_median": quantile(ttft, 0.5),
            "ttft_p95": quantile(ttft, 0.95),
            "total_median": quantile(total, 0.5),
            "total_p95": quantile(total, 0.95),
            "n": len(values),
        }
    return out


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its threads so far (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _decorate_and_report(client: httpx.Client, url: str, key: str, memory: str, i: int) -> None:
    """One turn over the hot API, as an agent without the proxy makes it: decorate the user's
    message, then report the model's reply."""
    headers = {"Authorization": f"Bearer {key}"}
    base = f"{url}/v1/memories/external/{memory}"
    question = {"role": "user", "content": f"Question number {i}?"}
    client.post(f"{base}/decorate", json={"messages": [question]}, headers=headers).raise_for_status()
    reply = {"role": "assistant", "content": "Hello from the stub."}
    client.post(f"{base}/report", json={"messages": [reply]}, headers=headers).raise_for_status()


def server_cpu(url: str, key: str, stub, pid: int, blocks: int = 10, per_block: int = 10) -> dict:
    """The server's CPU ms per call of each proxied target, and of one decorate + report over the
    hot API (`DECORATE_REPORT`, what the proxy's with-memory call is held against): `per_block`
    calls of one target between two readings of the server's CPU time, the targets' blocks
    interleaved, `blocks` times over. Each with-memory target (route and mode) and the decorate +
    report turns have a fresh memory of their own, so their windows grow alike, one turn a call."""
    targets = {t: v for t, v in _targets(url, key, stub).items() if t[1] != "direct"}
    fresh = "bench-cpu-" + uuid.uuid4().hex[:8]
    clients = {name: httpx.Client(timeout=30) for name in targets}
    spent: dict[tuple, float] = {(*t, s): 0.0 for t in targets for s in (False, True)}
    hot_client, hot_memory, hot_spent = httpx.Client(timeout=30), "bench-hot-" + uuid.uuid4().hex[:8], 0.0
    try:
        for block in range(blocks + 1):  # the first round warms up
            before = _cpu_seconds(pid)
            for i in range(per_block):
                _decorate_and_report(hot_client, url, key, hot_memory, block * per_block + i)
            if block:
                hot_spent += _cpu_seconds(pid) - before
            for stream in (False, True):
                for (route, name), (target, headers) in targets.items():
                    if name == "proxy, with memory":
                        memory = f"{fresh}-{route.replace('/', '-')}-{'stream' if stream else 'json'}"
                        headers = {**headers, "X-Threadless-External-Id": memory}
                    before = _cpu_seconds(pid)
                    for i in range(per_block):
                        _call(
                            clients[(route, name)],
                            target,
                            headers,
                            _body(route, block * per_block + i, stream),
                        )
                    if block:
                        spent[(route, name, stream)] += _cpu_seconds(pid) - before
    finally:
        hot_client.close()
        for client in clients.values():
            client.close()
    return {
        DECORATE_REPORT: hot_spent * 1000 / (blocks * per_block),
        **{
            f"{route}|{name}|{'stream' if stream else 'json'}": value * 1000 / (blocks * per_block)
            for (route, name, stream), value in spent.items()
        },
    }


def markdown(url: str, key: str, stub, rounds: int = ROUNDS, pid: int | None = None) -> str:
    data = run(url, key, stub, rounds)
    lines = [
        "## 6. Provider-compatible proxy (added latency)",
        "",
        "`POST /v1/openai/chat/completions` and `POST /v1/openai/responses`, each against the same local "
        "stub "
        f"upstream as its direct call, {rounds} rounds after a warm-up, all six targets, JSON and streamed, "
        "interleaved in a shuffled order each round (`bench/proxy_bench.py`). The stub answers at once and "
        "keeps its connections open (a stream in chunked encoding, as providers send it), so "
        "every millisecond beyond *direct* is the proxy's own: auth and rate limit, decorate (stores the "
        "user message, reads the window) and the durable report (reply + outbox row, written before the "
        "stream's last event), plus one more loopback hop; on the Responses route also the items translation "
        "and the response id it issues (every streamed event that carries the response object is rewritten). "
        "Time to first token = the first content chunk (`response.output_text.delta`) of a stream; for a "
        "JSON answer it is the total.",
        "",
        "| route | target | mode | TTFT median | TTFT p95 | total median | total p95 | added (total median) "
        "|",
        "|---|---|---|---|---|---|---|---|",
    ]
    added: dict = {}
    for route in ROUTES:
        for mode in ("json", "stream"):
            base = data[f"{route}|direct|{mode}"]["total_median"]
            for name in TARGETS:
                row = data[f"{route}|{name}|{mode}"]
                added[(route, name, mode)] = row["total_median"] - base
                cell = "—" if name == "direct" else f"+{row['total_median'] - base:.1f} ms"
                lines.append(
                    f"| {route} | {name} | {mode} | {row['ttft_median']:.1f} ms | {row['ttft_p95']:.1f} ms | "
                    f"{row['total_median']:.1f} ms | {row['total_p95']:.1f} ms | {cell} |"
                )
    lines += [
        "",
        "Responses beside chat completions, added latency (total median) in this run:",
        "",
        "| target | mode | chat completions | responses | ratio |",
        "|---|---|---|---|---|",
    ]
    for name in TARGETS[1:]:
        for mode in ("json", "stream"):
            chat, resp = added[("chat/completions", name, mode)], added[("responses", name, mode)]
            ratio = f"{resp / chat:.2f}×" if chat > 0 else "—"
            lines.append(f"| {name} | {mode} | +{chat:.1f} ms | +{resp:.1f} ms | {ratio} |")
    lines += ["", "Each memory grows by one turn per round (the window stays far below the default budget)."]
    if pid is not None:
        used = server_cpu(url, key, stub, pid)
        lines += [
            "",
            "The server's CPU time per call (its process's user + system time, blocks of 10 calls per "
            "target, interleaved, 100 calls each): what a call costs Threadless, which load on the machine "
            "blurs far less than the wall times above.",
            "",
            "| target | mode | chat completions | responses | ratio |",
            "|---|---|---|---|---|",
        ]
        for name in TARGETS[1:]:
            for mode in ("json", "stream"):
                chat, resp = used[f"chat/completions|{name}|{mode}"], used[f"responses|{name}|{mode}"]
                lines.append(f"| {name} | {mode} | {chat:.1f} ms | {resp:.1f} ms | {resp / chat:.2f}× |")
        hot = used[DECORATE_REPORT]
        lines += [
            "",
            "Against what the same turn costs without the proxy, in the same run: one decorate + report over "
            f"the hot API (`/v1/memories/external/<id>/decorate` then `/report`) took **{hot:.1f} ms** of "
            "the server's CPU. The targets: a proxied call with memory within decorate + report + 1 ms, "
            "one without memory within 1 ms.",
            "",
            "| target | mode | chat completions | responses | target | met |",
            "|---|---|---|---|---|---|",
        ]
        for name, limit in (("proxy, no memory", 1.0), ("proxy, with memory", hot + 1.0)):
            for mode in ("json", "stream"):
                chat, resp = used[f"chat/completions|{name}|{mode}"], used[f"responses|{name}|{mode}"]
                met = "yes" if max(chat, resp) <= limit else "no"
                lines.append(
                    f"| {name} | {mode} | {chat:.1f} ms | {resp:.1f} ms | ≤ {limit:.1f} ms | {met} |"
                )
    cpu = translation_cpu()
    lines += [
        "",
        "Each route's own protocol work per call, CPU time in-process (median of 1,000; the request's "
        "messages, the upstream body from a 20-message window, the JSON answer and a streamed answer's "
        "frames fed and passed on), the part of the difference that load on the machine does not blur:",
        "",
        "| route | CPU per call |",
        "|---|---|",
    ]
    lines += [f"| {route} | {value:.0f} µs |" for route, value in cpu.items()]
    return "\n".join(lines)


def translation_cpu(iterations: int = 1000) -> dict:
    """CPU µs per call of each route's own protocol work, in-process (no I/O, no database): the
    request's messages, the upstream body built from a 20-message window, the answer (JSON, and a
    stream's frames fed and passed on). Load on the machine moves this far less than the HTTP figures."""
    from types import SimpleNamespace

    setup(temp_var="tl-bench-")
    import orjson

    from harness.proxy_stubs import (
        Answer,
        openai_completion,
        openai_frames,
        responses_frames,
        responses_object,
    )
    from providers.bounded import SSEFramer, sse_parse
    from proxy.protocols import OPENAI, new_messages
    from proxy.responses import RESPONSES

    window = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"Message number {n} of the window."}
        for n in range(20)
    ]
    call = SimpleNamespace(
        memory=SimpleNamespace(id="mem_AbCdEfGhIjKlMnOpQrSt"),
        turn=11,
        degraded=False,
        conversation=None,
        thread=None,
    )
    text = "Hello from the stub, a reply of a dozen words or so to stream."
    cases = {
        "chat/completions": (
            OPENAI,
            {"model": "m", "messages": [{"role": "user", "content": "Hi?"}]},
            orjson.dumps(openai_completion({}, text, None)),
            "".join(openai_frames({}, text, None)),
        ),
        "responses": (
            RESPONSES,
            {"model": "m", "input": "Hi?"},
            orjson.dumps(responses_object({}, text, None, Answer())),
            "".join(responses_frames({}, text, None, Answer())),
        ),
    }
    out = {}
    for route, (protocol, body, answer, stream) in cases.items():

        def one_call(protocol=protocol, body=body, answer=answer, stream=stream):
            sent = protocol.forwardable(body)
            new_messages(protocol.messages_in(sent), has_history=True)
            protocol.upstream_body(sent, instructions="Be brief.", messages=window)
            protocol.reply(orjson.loads(answer))
            protocol.answer_json(answer, call)
            acc = protocol.stream()
            for frame in SSEFramer().feed(stream.encode()):
                event, data = sse_parse(frame.decode())
                acc.feed(event, data)
                protocol.answer_frame(frame, call)
            acc.message()

        samples = []
        for _ in range(iterations):
            start = time.process_time_ns()
            one_call()
            samples.append((time.process_time_ns() - start) / 1000)
        out[route] = quantile(samples, 0.5)
    return out


def main() -> None:
    """`--port N`: the server listens on N and the stub upstream on N + 1 (default: free ports)."""
    if "--help" in sys.argv or "-h" in sys.argv:
        print(
            "usage: python -m bench.proxy_bench [--port N]\n\n"
            "Starts a Threadless server (port N, else a free one) and a stub upstream (N + 1), then\n"
            "prints docs/benchmarks.md's proxy section: wall time and time to first token per target,\n"
            "the server's CPU per call beside one decorate + report in the same run, and each route's\n"
            "protocol work in process."
        )
        return
    sys.path.insert(0, str(ROOT))
    from harness.proxy_stubs import ProviderStub
    from harness.servers import ThreadlessServer

    port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else None
    stub = ProviderStub(port=port + 1 if port else 0, chunked_streams=True)
    server = ThreadlessServer(
        env={"THREADLESS_RATE_LIMIT_PER_MINUTE": "0", "THREADLESS_EGRESS_ALLOW": "127.0.0.1"}, port=port
    )
    try:
        server.start()
        print(markdown(server.url, server.key, stub, pid=server.web.pid))
    finally:
        server.stop()
        stub.close()


if __name__ == "__main__":
    main()
