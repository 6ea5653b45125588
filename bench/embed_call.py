"""What the query's embedding costs decorate with an `openai` provider, against a floor.

    .venv/bin/python -m bench.embed_call [--calls 200] [--blocks 5]

A local OpenAI-compatible `/v1/embeddings` server (loopback, HTTP/1.1 keep-alive, the answer in one
write, a fixed 384-d vector, no model) stands in for the provider, so only the client side is
measured. Three arms, interleaved block by block, wall-clock per call, median and p90:

* **floor** — one pooled `httpx.Client` posting the same body and reading the JSON: what any client
  of that server must spend;
* **embed_query** — `memories.embeddings.embed_query` for a project configured with that server:
  the provider lookup, the pinned outbound pool (`providers.base.http_client`), the vector's check;
* **new client per call** — `httpx.post` (a client, its CA bundle and a connection per call): the
  shape a per-call client would have (docs/tuning/recall.md).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIM = 384
QUESTION = "What did Caroline research last spring? ({})"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16  # head and body leave in one write (flushed after each request)

    def log_message(self, *args):
        pass

    def do_POST(self):  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        one = [1.0 / DIM ** 0.5] * DIM
        answer = json.dumps({"object": "list", "model": body.get("model"),
                             "data": [{"object": "embedding", "index": i, "embedding": one}
                                      for i, _ in enumerate(body.get("input", []))]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


def _setup() -> None:
    os.environ.setdefault("THREADLESS_VAR_DIR", tempfile.mkdtemp(prefix="tl-embed-call-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["THREADLESS_EGRESS_ALLOW"] = "127.0.0.1"  # the stand-in listens on loopback
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def run(calls: int, blocks: int) -> dict[str, dict]:
    import httpx

    from memories import embeddings
    from projects.services import project_create

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    project = project_create(name="embed-call")
    project.model_config = {"embeddings": {"provider": "openai", "model": "bench-embed", "baseUrl": url}}
    project.save(update_fields=["model_config"])
    floor_client = httpx.Client(trust_env=False)

    def floor(text: str) -> None:
        response = floor_client.post(url + "/embeddings", json={"model": "bench-embed", "input": [text]}, timeout=30)
        assert len(response.json()["data"][0]["embedding"]) == DIM

    def query(text: str) -> None:
        assert embeddings.embed_query(project, text) is not None

    def fresh(text: str) -> None:
        response = httpx.post(url + "/embeddings", json={"model": "bench-embed", "input": [text]}, timeout=30)
        assert len(response.json()["data"][0]["embedding"]) == DIM

    arms = {"floor": floor, "embed_query": query, "new client per call": fresh}
    samples: dict[str, list[float]] = {name: [] for name in arms}
    for call in arms.values():  # warm: the pools' first connection, imports
        call(QUESTION.format("warm"))
    per_block = max(calls // blocks, 1)
    for block in range(blocks):
        for name, call in arms.items():
            for i in range(per_block):
                started = time.perf_counter()
                call(QUESTION.format(f"{block}-{i}"))
                samples[name].append((time.perf_counter() - started) * 1000)
    floor_client.close()
    server.shutdown()
    server.server_close()
    out = {}
    for name, values in samples.items():
        ordered = sorted(values)
        out[name] = {"median_ms": statistics.median(values), "p90_ms": ordered[int(0.9 * (len(ordered) - 1))],
                     "n": len(values)}
    base = out["floor"]["median_ms"] or 1e-9
    for stat in out.values():
        stat["x_floor"] = stat["median_ms"] / base
    return out


def markdown(results: dict[str, dict]) -> list[str]:
    lines = ["| arm | median | p90 | × floor (median) |", "|---|---:|---:|---:|"]
    for name, stat in results.items():
        lines.append(f"| {name} | {stat['median_ms']:.2f} ms | {stat['p90_ms']:.2f} ms | {stat['x_floor']:.2f}× |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per arm")
    parser.add_argument("--blocks", type=int, default=5, help="interleaved blocks")
    args = parser.parse_args()
    _setup()
    print("\n".join(markdown(run(args.calls, args.blocks))))


if __name__ == "__main__":
    main()
