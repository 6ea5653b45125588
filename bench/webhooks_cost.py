"""What webhooks add to the paths that emit events: a report, a report with a failed task (its
`digest.created` is queued in the request), and the report's background job (a `fact.created` and
`memory.processed`), with no endpoint against three endpoints that want every event.

    .venv/bin/python -m bench.webhooks_cost [--turns 200] [--rounds 2]

Runs in a throwaway SQLite database on the configured broker (the embedded filesystem one unless
CELERY_BROKER_URL is set); nothing is delivered (no worker runs), so this is the cost the change's
own transaction and its commit pay: the endpoints read, the delivery rows, one broker publish per
event (made on the publisher's thread, so the CPU figures are the committing thread's own).
Prints its section of docs/benchmarks.md (`make bench` runs it in a child process); the floor is
no endpoint, measured in the same run, rounds alternating none / three.
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench.django_setup import setup

TITLE = "## 11. Webhooks on the report path (`bench/webhooks_cost.py`)"
PATHS = {
    "report": "report of one reply (no event of its own)",
    "failed": "report with a failed task (`digest.created`)",
    "job": "its background job (`fact.created`, `memory.processed`)",
}


def _round(endpoints: int, turns: int) -> dict[str, tuple[list[float], list[float]]]:
    """{path: (wall ms, CPU ms)} of `turns` reports with and without a failure, and each report's
    background job, in a fresh project with `endpoints` endpoints that want every event."""
    from memories import services
    from memories.models import Outbox
    from projects.services import project_create
    from webhooks import services as webhooks
    from webhooks.events import EVENT_TYPES

    project = project_create(name=f"bench {endpoints}")
    for i in range(endpoints):
        webhooks.endpoint_create(project=project, url=f"http://127.0.0.1:9/hook{i}", events=list(EVENT_TYPES))
    memory, _ = services.memory_create(project=project, policy={"strictWriteDiscipline": {"enabled": True}})
    times: dict[str, tuple[list[float], list[float]]] = {path: ([], []) for path in PATHS}
    for turn in range(turns):
        services.memory_decorate(
            memory=memory, messages=[{"role": "user", "content": f"I live in City{turn}."}]
        )
        failures = (
            [{"task_id": "weather", "error": "HTTP 503", "output": None, "has_output": False}]
            if turn % 2
            else []
        )
        started, cpu = time.perf_counter(), time.thread_time()
        services.report_accept(
            memory=memory, messages=[{"role": "assistant", "content": "ok"}], failures=failures
        )
        wall, cpu = (time.perf_counter() - started) * 1000, (time.thread_time() - cpu) * 1000
        out = times["failed" if failures else "report"]
        out[0].append(wall)
        out[1].append(cpu)
        row = Outbox.objects.filter(memory=memory, processed_at=None).order_by("id").first()
        started, cpu = time.perf_counter(), time.thread_time()
        services.outbox_process(outbox_id=row.id)
        times["job"][0].append((time.perf_counter() - started) * 1000)
        times["job"][1].append((time.thread_time() - cpu) * 1000)
    return times


def measure(turns: int, rounds: int) -> dict:
    """{"none" | "three": {path: {"p50", "p95", "cpu"}}}, rounds alternating none / three."""
    from django.conf import settings

    runs = {"none": {p: ([], []) for p in PATHS}, "three": {p: ([], []) for p in PATHS}}
    for _ in range(rounds):
        for name, endpoints in (("none", 0), ("three", 3)):
            for path, (wall, cpu) in _round(endpoints, turns).items():
                runs[name][path][0].extend(wall)
                runs[name][path][1].extend(cpu)
    return {
        "turns": turns,
        "broker": settings.CELERY_BROKER_URL.split(":", 1)[0],
        "rounds": rounds,
        **{name: {path: _stat(*values) for path, values in paths.items()} for name, paths in runs.items()},
    }


def _stat(wall: list[float], cpu: list[float]) -> dict:
    wall = sorted(wall)
    return {
        "p50": statistics.median(wall),
        "p95": wall[int(0.95 * (len(wall) - 1))],
        "cpu": statistics.median(cpu),
    }


def _cell(s: dict) -> str:
    return f"{s['p50']:.2f} / {s['p95']:.2f} ({s['cpu']:.2f})"


def markdown(r: dict) -> str:
    lines = [
        TITLE,
        "",
        f"SQLite, in process, broker `{r['broker']}://`; no worker runs, so nothing is "
        "delivered: this is what the change's own transaction and commit pay (the endpoints read, one "
        "delivery row per endpoint and event, the publish handed to the publisher thread). A memory "
        "with strict write discipline; each turn a decorate, then a report of one reply (every other "
        "one with a failed task, whose `digest.created` is queued in the request), then the report's "
        "background job (its `fact.created` and `memory.processed`). No endpoint against three that "
        f"want every event, in fresh projects, {r['rounds']} rounds of {r['turns']} turns alternating "
        "none / three. Median / p95 ms (median CPU of the measuring thread). The floor is no endpoint, "
        "in the same run; there is no target in the spec, the ratio is the claim. Alone: "
        "`.venv/bin/python -m bench.webhooks_cost [--turns 200] [--rounds 2]`.",
        "",
        "| path | three endpoints | no endpoint (floor) | ratio (p50 wall / CPU) |",
        "|---|---:|---:|---:|",
    ]
    for path, label in PATHS.items():
        three, none = r["three"][path], r["none"][path]
        lines.append(
            f"| {label} | {_cell(three)} | {_cell(none)} | "
            f"{three['p50'] / none['p50']:.2f}× / {three['cpu'] / none['cpu']:.2f}× |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    setup(
        temp_var="tl-bench-webhooks-",
        sqlite=True,
        migrate=True,
        THREADLESS_EMBEDDINGS="off",
        THREADLESS_EGRESS_ALLOW="127.0.0.1",
        LOG_LEVEL="WARNING",
    )
    print(markdown(measure(args.turns, args.rounds)))


if __name__ == "__main__":
    main()
