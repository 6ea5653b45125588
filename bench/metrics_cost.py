"""The cost of Prometheus metrics on the hot routes, for docs/benchmarks.md.

Two live servers in the same run, the same build, one with THREADLESS_METRICS on (and a token, so
/metrics answers) and one with it off. Each round sends a block of decorate + report pairs to one
server and then the same block to the other (the order alternates), on one keep-alive connection
each; the figure is requests per second of the web process's CPU (its utime + stime from /proc,
so the other processes sharing the machine do not blur it) and, beside it, of the wall clock.
Target: metrics cost at most 3 % of throughput. A second table times the recording calls a hot
request makes (common.metrics: one request counter and histogram, decorate's or report's own
figures) in this process, against the same server's CPU per request.

Run alone: `.venv/bin/python -m bench.metrics_cost [--rounds N] [--block N]`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import httpx

from bench.common import ROOT, quantile

TITLE = "## 9. Metrics on the hot routes"
TARGET = 0.03
TOKEN = "bench-metrics-token"


def _cpu_seconds(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _block(client: httpx.Client, memory: str, pairs: int, start: int) -> None:
    for i in range(start, start + pairs):
        client.post(
            f"/v1/memories/{memory}/decorate",
            json={"messages": [{"role": "user", "content": f"Question {i}: I live in Lisbon, what now?"}]},
        ).raise_for_status()
        client.post(
            f"/v1/memories/{memory}/report",
            json={"messages": [{"role": "assistant", "content": f"Answer {i}."}]},
        ).raise_for_status()


def run(rounds: int = 12, block: int = 60) -> dict:
    from harness.servers import ThreadlessServer

    common = {"THREADLESS_RATE_LIMIT_PER_MINUTE": "0"}
    servers = {
        "with metrics": ThreadlessServer(
            env={**common, "THREADLESS_METRICS": "true", "THREADLESS_METRICS_TOKEN": TOKEN}
        ),
        "without metrics": ThreadlessServer(env={**common, "THREADLESS_METRICS": "false"}),
    }
    clients, memories = {}, {}
    per_round: dict[str, list[tuple[float, float]]] = {name: [] for name in servers}
    try:
        for name, server in servers.items():
            server.start()
            clients[name] = httpx.Client(
                base_url=server.url, timeout=30, headers={"Authorization": f"Bearer {server.key}"}
            )
            memories[name] = clients[name].post("/v1/memories", json={}).json()["id"]
            _block(clients[name], memories[name], 20, 0)  # warm-up
        order = list(servers)
        for r in range(rounds):
            for name in order if r % 2 == 0 else order[::-1]:
                pid = servers[name].web.pid
                cpu, wall = _cpu_seconds(pid), time.perf_counter()
                _block(clients[name], memories[name], block, 1000 + r * block)
                per_round[name].append((_cpu_seconds(pid) - cpu, time.perf_counter() - wall))
        scrape = httpx.get(
            servers["with metrics"].url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}
        )
        scraped = scrape.status_code == 200 and "threadless_decorate_total" in scrape.text
    finally:
        for client in clients.values():
            client.close()
        for server in servers.values():
            server.stop()
    requests = 2 * block
    out: dict = {"rounds": rounds, "block": block, "scraped": scraped}
    for name, samples in per_round.items():
        cpu = sum(s[0] for s in samples)
        wall = sum(s[1] for s in samples)
        out[name] = {
            "cpu_rps": requests * len(samples) / cpu,
            "wall_rps": requests * len(samples) / wall,
            "cpu_ms_per_request": cpu / (requests * len(samples)) * 1000,
            "wall_rps_median": quantile([requests / s[1] for s in samples], 0.5),
        }
    out["recording_us"] = _recording_cost()
    return out


def _recording_cost(n: int = 20000) -> dict:
    """CPU µs of what one hot request records (in this process, multi-process files under a temp dir)."""
    import tempfile

    from bench.django_setup import setup

    setup(THREADLESS_METRICS_DIR=tempfile.mkdtemp(prefix="tl-bench-metrics-"))
    from common import metrics

    def decorate():
        metrics.request("v1/memories/<str:memory_id>/decorate", "POST", 200, 0.004)
        metrics.decorate(window=120, recalled=3, facts=4)

    def report():
        metrics.request("v1/memories/<str:memory_id>/report", "POST", 202, 0.003)
        metrics.report(accepted=True, messages=1)

    out = {}
    for name, call in (("decorate", decorate), ("report", report)):
        started = time.process_time()
        for _ in range(n):
            call()
        out[name] = (time.process_time() - started) / n * 1e6
    return out


def markdown(rounds: int = 12, block: int = 60) -> str:
    data = run(rounds, block)
    on, off = data["with metrics"], data["without metrics"]
    cpu_cost = 1 - on["cpu_rps"] / off["cpu_rps"]
    wall_cost = 1 - on["wall_rps"] / off["wall_rps"]
    per_request = off["cpu_ms_per_request"] * 1000
    rec = data["recording_us"]
    ok = cpu_cost <= TARGET
    lines = [
        TITLE,
        "",
        "Two live servers in one run (`bench/metrics_cost.py`): THREADLESS_METRICS on (with a token; "
        "/metrics "
        f"{'answered' if data['scraped'] else 'did NOT answer'} after the run) and off. {data['rounds']} "
        f"rounds, each a block of {data['block']} decorate + report pairs to one server and then to the "
        "other (order alternating), one keep-alive connection each, embedded default (SQLite). Throughput is "
        "requests per second of the web process's own CPU (utime + stime), which other load on the machine "
        "does not change; wall-clock throughput beside it. Target: metrics cost ≤ 3 % of throughput.",
        "",
        "| server | requests / CPU s | CPU ms / request | requests / wall s | median block (req/s) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name in ("without metrics", "with metrics"):
        row = data[name]
        lines.append(
            f"| {name} | {row['cpu_rps']:.0f} | {row['cpu_ms_per_request']:.3f} | {row['wall_rps']:.0f} | "
            f"{row['wall_rps_median']:.0f} |"
        )
    lines += [
        "",
        f"**Cost of metrics: {cpu_cost * 100:+.1f} % of CPU throughput {'✅' if ok else '❌'} (target ≤ 3 "
        f"%); {wall_cost * 100:+.1f} % of wall-clock throughput.** A negative figure is noise: the two "
        "servers differ by less than the run-to-run spread.",
        "",
        f"What a hot request records, timed alone in-process (multi-process files, 20,000 calls): decorate "
        f"{rec['decorate']:.1f} µs, report {rec['report']:.1f} µs of CPU, against {per_request:.0f} µs of "
        f"server CPU per request above: {max(rec.values()) / per_request * 100:.2f} % at most.",
    ]
    return "\n".join(lines)


def main() -> None:
    sys.path.insert(0, str(ROOT))
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--block", type=int, default=60)
    args = parser.parse_args()
    print(markdown(args.rounds, args.block))


if __name__ == "__main__":
    main()
