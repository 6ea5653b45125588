"""The load bench's in-process half: decorate (store=True) on a memory of the stack's own database,
timed in this process (each followed by the turn's report: the CPU both service calls take per
turn, with no HTTP at all), and the SQL writes one decorate / report make through the API
(CaptureQueriesContext), run after the stack's server stopped. Prints JSON.

    python -m bench.load.inproc MEMORY_ID      (settings from the environment, like the server)
"""

from __future__ import annotations

import json
import re
import sys
import time

from bench.django_setup import setup

# Every row write of a statement: a plain one, or each data-modifying CTE of a `WITH …` statement
# (PostgreSQL's one-statement decorate and report), as tests/memories/api/test_write_budget.py counts them.
WRITES = re.compile(
    r'(?<!DO )\b(INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM|REPLACE\s+INTO)\s+"?(\w+)"?',
    re.IGNORECASE,
)
STORED_TABLES = ("memories_entry", "memories_turn", "memories_outbox")


def main() -> None:
    setup()
    import orjson
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from bench.common import quantile
    from memories.models import Memory
    from memories.services import memory_decorate, report_accept
    from projects.services import key_create

    memory_id = sys.argv[1]
    times, cpu = [], {"decorate": 0.0, "report": 0.0}
    for i in range(60):
        memory = Memory.objects.get(pk=memory_id)
        start, started_cpu = time.perf_counter(), time.process_time()
        orjson.dumps(
            memory_decorate(
                memory=memory, messages=[{"role": "user", "content": f"in process {i}?"}], store=True
            )
        )
        if i >= 10:
            times.append((time.perf_counter() - start) * 1000)
            cpu["decorate"] += time.process_time() - started_cpu
        # The turn's report, in process too: what the service functions alone cost per turn.
        memory = Memory.objects.get(pk=memory_id)
        started_cpu = time.process_time()
        orjson.dumps(
            report_accept(
                memory=memory, messages=[{"role": "assistant", "content": f"answer {i}."}], failures=[]
            )
        )
        if i >= 10:
            cpu["report"] += time.process_time() - started_cpu

    from django.test import Client

    memory = Memory.objects.get(pk=memory_id)
    _key, plaintext = key_create(project=memory.project)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    counts = {}
    for op, role in (("decorate", "user"), ("report", "assistant")):
        body = json.dumps({"messages": [{"role": role, "content": "counted"}]})
        client.post(f"/v1/memories/{memory_id}/{op}", body, content_type="application/json")  # key warm
        with CaptureQueriesContext(connection) as ctx:
            response = client.post(f"/v1/memories/{memory_id}/{op}", body, content_type="application/json")
        assert response.status_code in (200, 202), response.content[:200]
        writes = [
            (verb.split()[0].upper(), table)
            for q in ctx.captured_queries
            for verb, table in WRITES.findall(q["sql"])
        ]
        counts[op] = len(writes)
        counts[f"{op}_extra"] = len([w for w in writes if not (w[0] == "INSERT" and w[1] in STORED_TABLES)])
        counts[f"{op}_statements"] = len(
            [q for q in ctx.captured_queries if not q["sql"].startswith(("SAVEPOINT", "RELEASE"))]
        )
    print(
        json.dumps(
            {
                "decorate_p50": quantile(times, 0.5),
                "writes": counts,
                "cpu_ms": {op: total * 1000 / len(times) for op, total in cpu.items()},
            }
        )
    )


if __name__ == "__main__":
    main()
