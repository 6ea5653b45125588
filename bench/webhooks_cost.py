"""What webhooks add to the paths that emit events: a report, a report with a failed task (its
`digest.created` is queued in the request), and the report's background job (a `fact.created` and
`memory.processed`), with no endpoint against three endpoints that want every event.

    .venv/bin/python -m bench.webhooks_cost [--turns 200] [--rounds 2]

Runs in a throwaway SQLite database on the configured broker (the embedded filesystem one unless
CELERY_BROKER_URL is set); nothing is delivered (no worker runs), so this is the cost the change's
own transaction and its commit pay: the endpoints read, the delivery rows, one broker publish per
event (made on the publisher's thread, so the CPU figures are the committing thread's own).
Prints the medians (ms) of each, per round, rounds alternating none / three.
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench.django_setup import setup


def _round(endpoints: int, turns: int) -> str:
    from memories import services
    from memories.models import Outbox
    from projects.services import project_create
    from webhooks import services as webhooks
    from webhooks.events import EVENT_TYPES

    project = project_create(name=f"bench {endpoints}")
    for i in range(endpoints):
        webhooks.endpoint_create(project=project, url=f"http://127.0.0.1:9/hook{i}", events=list(EVENT_TYPES))
    memory, _ = services.memory_create(project=project, policy={"strictWriteDiscipline": {"enabled": True}})
    plain, failed, jobs, failed_cpu, jobs_cpu = [], [], [], [], []
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
        (failed if failures else plain).append(time.perf_counter() - started)
        if failures:
            failed_cpu.append(time.thread_time() - cpu)
        row = Outbox.objects.filter(memory=memory, processed_at=None).order_by("id").first()
        started, cpu = time.perf_counter(), time.thread_time()
        services.outbox_process(outbox_id=row.id)
        jobs.append(time.perf_counter() - started)
        jobs_cpu.append(time.thread_time() - cpu)
    ms = lambda values: statistics.median(values) * 1000  # noqa: E731
    return (
        f"report {ms(plain):.2f} ms, report with a failure {ms(failed):.2f} ms (CPU {ms(failed_cpu):.2f}), "
        f"its background job {ms(jobs):.2f} ms (CPU {ms(jobs_cpu):.2f})"
    )


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
    for _ in range(args.rounds):
        for endpoints in (0, 3):
            print(f"{endpoints} endpoints: {_round(endpoints, args.turns)}")


if __name__ == "__main__":
    main()
