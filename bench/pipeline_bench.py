"""Pipeline figures for docs/benchmarks.md: a turn's overhead with the offline `demo` model
(bench/pipeline_overhead.py, in process, run as a child since it sets Django up itself), and the
time to the first streamed token over HTTP against a real uvicorn server (SSE say).
"""

from __future__ import annotations

import re
import subprocess
import sys
import time

import httpx

from bench.common import ROOT, quantile

TARGET_OVERHEAD_MS = 5.0


def in_process(turns: int = 150) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "bench.pipeline_overhead", str(turns)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    text = done.stdout
    out: dict = {"raw": text.strip(), "ok": done.returncode == 0}
    json_say = re.search(
        r"JSON say \(turn_say\): .*?wall median ([\d.]+) ms.*?CPU time median ([\d.]+) ms", text
    )
    streamed = re.search(r"streamed say .*?wall median ([\d.]+) ms.*?CPU time median ([\d.]+) ms", text)
    model = re.search(r"demo model's own time: median ([\d.]+) µs", text)
    queries = re.search(r"SQL queries per JSON turn .*?: (\d+)", text)
    if json_say and model:
        model_ms = float(model.group(1)) / 1000
        out.update(
            {
                "json_wall": float(json_say.group(1)),
                "json_cpu": float(json_say.group(2)),
                "model_ms": model_ms,
                "queries": int(queries.group(1)) if queries else None,
            }
        )
        if streamed:
            out.update({"stream_wall": float(streamed.group(1)), "stream_cpu": float(streamed.group(2))})
    else:
        out["error"] = (done.stderr or text)[-1500:]
    return out


def over_http(url: str, key: str, turns: int = 20) -> dict:
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url + "/v1", headers=headers, timeout=60) as client:
        agent = client.post(
            "/agents",
            json={
                "name": f"bench-{int(time.time())}",
                "config": {"workflow": [{"id": "llm", "type": "llm", "provider": "demo"}]},
            },
        ).json()
        conversation = client.post(f"/agents/{agent['id']}/conversations", json={}).json()
        path = f"/conversations/{conversation['id']}/say"
        first, total, json_say = [], [], []
        for i in range(turns + 2):
            started = time.perf_counter()
            got_first = None
            with client.stream(
                "POST",
                path,
                json={"input": f"Tell me about turn {i}."},
                headers={"Accept": "text/event-stream"},
            ) as response:
                assert response.status_code == 200, response.read()[:300]
                for line in response.iter_lines():
                    if got_first is None and line.startswith("event: token"):
                        got_first = time.perf_counter() - started
                    if line.startswith("event: done"):
                        break
            elapsed = time.perf_counter() - started
            started = time.perf_counter()
            r = client.post(path, json={"input": f"And turn {i}, without streaming?"})
            assert r.status_code == 200, r.text[:300]
            if i >= 2:  # warm-up
                first.append((got_first or elapsed) * 1000)
                total.append(elapsed * 1000)
                json_say.append((time.perf_counter() - started) * 1000)
    return {
        "first_token": {"median": quantile(first, 0.5), "p95": quantile(first, 0.95)},
        "stream_total": {"median": quantile(total, 0.5), "p95": quantile(total, 0.95)},
        "json_say": {"median": quantile(json_say, 0.5), "p95": quantile(json_say, 0.95)},
        "n": len(first),
    }


def markdown(url: str, key: str) -> str:
    local = in_process()
    lines = ["## 4. Pipeline (embedded default, `demo` model)", ""]
    if "json_wall" in local:
        overhead = local["json_wall"] - local["model_ms"]
        overhead_cpu = local["json_cpu"] - local["model_ms"]
        ok = overhead <= TARGET_OVERHEAD_MS
        ok_cpu = overhead_cpu <= TARGET_OVERHEAD_MS
        lines += [
            f"Target: a turn's overhead over the model's own time ≤ {TARGET_OVERHEAD_MS:g} ms. In process "
            "(`bench/pipeline_overhead.py`: `turn_say` on one conversation, an `llm` task with the `demo` "
            "model, strict write discipline on):",
            "",
            "| figure | wall | CPU |",
            "|---|---:|---:|",
            f"| JSON turn (`turn_say`), median | {local['json_wall']:.2f} ms | {local['json_cpu']:.2f} ms |",
        ]
        if "stream_wall" in local:
            lines.append(
                f"| streamed turn (`turn_execute(stream=True)`), median | {local['stream_wall']:.2f} ms "
                f"| {local['stream_cpu']:.2f} ms |"
            )
        lines += [
            f"| the demo model's own time | {local['model_ms']:.3f} ms | |",
            f"| **overhead per turn** | **{overhead:.2f} ms** {'✅' if ok else '❌'} | **{overhead_cpu:.2f} "
            f"ms** {'✅' if ok_cpu else '❌'} |",
            "",
            f"SQL statements per JSON turn: {local.get('queries')}.",
            "",
        ]
    else:
        lines += [
            "The in-process pipeline figure failed:",
            "",
            "```",
            local.get("error", "")[-1200:],
            "```",
            "",
        ]
    remote = over_http(url, key)
    lines += [
        f"Over HTTP (a real uvicorn server, SSE say, {remote['n']} turns after a warm-up):",
        "",
        "| figure | median | p95 |",
        "|---|---:|---:|",
        f"| time to first streamed token (`event: token`) | {remote['first_token']['median']:.1f} ms "
        f"| {remote['first_token']['p95']:.1f} ms |",
        f"| whole streamed turn (to `event: done`) | {remote['stream_total']['median']:.1f} ms "
        f"| {remote['stream_total']['p95']:.1f} ms |",
        f"| JSON say round trip | {remote['json_say']['median']:.1f} ms | {remote['json_say']['p95']:.1f} ms "
        "|",
    ]
    return "\n".join(lines)
