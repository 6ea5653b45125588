"""decorate's in-process latency for memories of different sizes at a 60,000-token budget.

    .venv/bin/python -m bench.decorate_latency [--calls 300] [--sizes 100,10000,100000]

Builds each memory with bulk_create in a throwaway database (a SQLite file in a temporary var
dir, or the database DATABASE_URL names), then times POST /v1/memories/{id}/decorate through
Django's full request stack in this process (middleware, auth, rate limit, view, orjson) —
no socket. Each call stores its new user message, as a real decorate does. Prints a Markdown
table. decorate's cost must grow with the window, not with the memory: a 10,000 and a 100,000
message memory both fill the same ~1,100-message window and should take about as long.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

MESSAGE = ("Tell me more about the trip to Lyon we planned last spring, with the museums, the food "
           "markets and the river walks, and what we decided about the train times and the hotel.")
REPLY = ("We picked the morning train, two nights near the old town, the Musée des Confluences on "
         "Saturday and the Croix-Rousse market on Sunday morning before the walk along the Saône.")


def _setup() -> None:
    os.environ.setdefault("THREADLESS_VAR_DIR", tempfile.mkdtemp(prefix="tl-bench-"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
    os.environ["THREADLESS_RATE_LIMIT_PER_MINUTE"] = "0"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def build_memory(project, size: int):
    """A memory of `size` committed messages (user/assistant turns), written in bulk."""
    from django.db import transaction
    from django.utils import timezone
    from threadless.window import message_tokens

    from memories import recall
    from memories.models import Entry, Memory, Turn
    from memories.services import memory_create

    memory, _ = memory_create(project=project, metadata={"bench": size})
    user_tokens = message_tokens({"content": MESSAGE})
    reply_tokens = message_tokens({"content": REPLY})
    now = timezone.now()
    batch = 5000
    with transaction.atomic():
        for start in range(0, size, batch):
            entries, turns = [], []
            for seq in range(start + 1, min(size, start + batch) + 1):
                turn = (seq + 1) // 2
                user = seq % 2 == 1
                if user:
                    turns.append(Turn(memory=memory, number=turn, input=MESSAGE))
                entries.append(Entry(memory=memory, seq=seq, turn=turn, kind="message",
                                     role="user" if user else "assistant", content=MESSAGE if user else REPLY,
                                     tokens=user_tokens if user else reply_tokens, created_at=now))
            Turn.objects.bulk_create(turns)
            Entry.objects.bulk_create(entries)
            # What the worker does after each report: index the messages for recall.
            ids = list(Entry.objects.filter(memory=memory, seq__gt=start).values_list("id", flat=True))
            recall.index_entries(memory_id=memory.id, entry_ids=ids)
        Memory.objects.filter(pk=memory.pk).update(
            last_seq=size, last_turn=(size + 1) // 2, turn_start_seq=max(2 * ((size + 1) // 2) - 1, 0),
            message_count=size,
            token_count=(size + 1) // 2 * user_tokens + size // 2 * reply_tokens)
    memory.refresh_from_db()
    return memory


def measure(client, memory, calls: int) -> dict:
    import orjson

    path = f"/v1/memories/{memory.id}/decorate"
    times, window, recalled = [], 0, 0
    for i in range(calls + 10):
        # A question sharing words with the history, so recall has matches to rank.
        body = orjson.dumps({"messages": [{"role": "user", "content": f"Which hotel in Lyon, again ({i})?"}],
                             "budget_tokens": 60000})
        start = time.perf_counter()
        response = client.post(path, body, content_type="application/json")
        elapsed = time.perf_counter() - start
        assert response.status_code == 200, response.content[:300]
        if i >= 10:  # the first calls warm caches and connections
            times.append(elapsed * 1000)
        answer = orjson.loads(response.content)
        window, recalled = len(answer["messages"]), answer["usage"]["recalled"]
    times.sort()
    return {"median": statistics.median(times), "p90": times[int(len(times) * 0.9) - 1], "window": window,
            "recalled": recalled}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--sizes", default="100,10000,100000")
    args = parser.parse_args()
    _setup()
    from django.conf import settings
    from django.test import Client

    from projects.services import key_create, project_create

    project = project_create(name="bench")
    _key, plaintext = key_create(project=project)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    engine = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        built = time.perf_counter()
        memory = build_memory(project, size)
        built = time.perf_counter() - built
        result = measure(client, memory, args.calls)
        rows.append((size, result, built))
    print(f"decorate, in-process (Django test client, no socket), {engine}, budget 60,000 tokens, "
          f"{args.calls} calls each\n")
    print("| messages in memory | window (messages) | recalled | median ms | p90 ms | build s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for size, result, built in rows:
        print(f"| {size:,} | {result['window']:,} | {result['recalled']} | {result['median']:.2f} "
              f"| {result['p90']:.2f} | {built:.1f} |")


if __name__ == "__main__":
    main()
