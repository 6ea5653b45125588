"""The overhead the turn pipeline adds to a turn, with the offline `demo` model (in-process).

Runs N turns on one conversation through `chat.services.turn_say` (JSON say) and through the
streamed path (`runner.turn_execute(stream=True)`), on a fresh SQLite database under var/bench,
and prints the median / p90 per turn, the demo model's own time, and the SQL queries per turn.

    .venv/bin/python -m bench.pipeline_overhead [turns]
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from pathlib import Path

from bench.django_setup import setup

VAR = Path(__file__).resolve().parent.parent / "var" / "bench-pipeline"


def main(turns: int) -> None:
    shutil.rmtree(VAR, ignore_errors=True)
    setup(var_dir=VAR, sqlite=True, migrate=True)
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from chat import runner, services
    from projects.services import project_create
    from providers import demo

    project = project_create(name="bench")
    agent = services.agent_create(
        project=project,
        name="bench",
        config={
            "memoryPolicy": {"strictWriteDiscipline": {"enabled": True}},
            "workflow": [{"id": "llm", "type": "llm", "provider": "demo"}],
        },
    )

    def measure(streamed: bool) -> list[float]:
        conversation, _ = services.conversation_create(agent=agent)
        times, cpu = [], []
        for i in range(turns):
            text = f"Message number {i}: tell me something about turn {i}."
            began, began_cpu = time.perf_counter(), time.process_time()
            if streamed:
                handle = runner.turn_begin(conversation=conversation, text=text)
                runner.turn_execute(handle=handle, stream=True, listener=lambda _e: None)
            else:
                services.turn_say(conversation=conversation, text=text)
            times.append((time.perf_counter() - began) * 1000)
            cpu.append((time.process_time() - began_cpu) * 1000)
        return times, cpu

    model = []
    for i in range(200):
        began = time.perf_counter()
        demo.reply("", [{"role": "user", "content": f"Message number {i}"}])
        model.append((time.perf_counter() - began) * 1000)
    conversation, _ = services.conversation_create(agent=agent)
    with CaptureQueriesContext(connection) as queries:
        services.turn_say(conversation=conversation, text="count my queries")
    for name, streamed in (("JSON say (turn_say)", False), ("streamed say (turn_execute stream=True)", True)):
        times, cpu = measure(streamed)
        ordered = sorted(times)
        print(
            f"{name}: {turns} turns, wall median {statistics.median(times):.2f} ms, "
            f"p90 {ordered[int(len(ordered) * 0.9)]:.2f} ms, min {ordered[0]:.2f} ms; "
            f"CPU time median {statistics.median(cpu):.2f} ms"
        )
    print(f"demo model's own time: median {statistics.median(model) * 1000:.1f} µs")
    print(f"SQL queries per JSON turn (demo llm task, 1 turn): {len(queries.captured_queries)}")
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
