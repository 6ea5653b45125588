"""One backend's measurements (a child process of `bench.run`, since Django is set up once per
process): decorate's read path and report accept vs memory size, side by side with the lower
bound and the peer, in process and over HTTP against a real uvicorn server.

    python -m bench.measure --backend sqlite --out var/bench/sqlite.json [--sizes 100,1000]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

from bench.common import (
    BUDGET,
    SIZES,
    VAR,
    conversation,
    interleaved,
    new_user_message,
    reply_message,
    summary,
    window_key,
)
from bench.memory_builder import copy_memory, populate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # harness

from harness.servers import ThreadlessServer  # noqa: E402

BENCH_REDIS_DB = {
    "broker": int(os.environ.get("BENCH_REDIS_BROKER_DB", "11")),
    "cache": int(os.environ.get("BENCH_REDIS_CACHE_DB", "10")),
}


def log(*parts) -> None:
    print("[bench]", *parts, file=sys.stderr, flush=True)


def start_server(backend: str) -> ThreadlessServer:
    env = {"THREADLESS_RATE_LIMIT_PER_MINUTE": "0"}
    if backend == "postgres":
        os.environ.setdefault("DATABASE_URL", "postgres://root@127.0.0.1:5432/postgres")
        env["CELERY_BROKER_URL"] = f"redis://127.0.0.1:6379/{BENCH_REDIS_DB['broker']}"
        env["REDIS_URL"] = f"redis://127.0.0.1:6379/{BENCH_REDIS_DB['cache']}"
        named = os.environ.get("BENCH_PG_DATABASE")
        if named:
            # A database of this name, made fresh for the run (and dropped after it), instead of
            # the harness's random one: for machines where each job has its own database names.
            url = os.environ["DATABASE_URL"].rsplit("/", 1)[0] + "/" + named
            _recreate_database(url)
            env.update({"DATABASE_URL": url, "THREADLESS_CELERY_QUEUE": f"{named}-queue"})
        else:
            os.environ["THREADLESS_SERVICES"] = "1"
    else:
        os.environ.pop("THREADLESS_SERVICES", None)
        os.environ.pop("DATABASE_URL", None)
    server = ThreadlessServer(env=env)
    server.start()
    os.environ.update(server.env)
    from bench.django_setup import setup

    setup()
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)
    return server


def _recreate_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def drop_database(server: ThreadlessServer) -> None:
    url = server.env["DATABASE_URL"]
    if not url.startswith("postgres"):
        return
    import psycopg
    from django.db import connections

    connections.close_all()
    name = url.rsplit("/", 1)[1]
    admin = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    parser.add_argument("--out", required=True)
    parser.add_argument("--budget", type=float, default=12.0, help="seconds of timed rounds per size")
    parser.add_argument("--peer", action="store_true", help="measure the LangGraph peer too")
    parser.add_argument("--profile", default="", help="write a pyinstrument profile of decorate here")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]

    VAR.mkdir(parents=True, exist_ok=True)
    # SIGTERM (make interrupted, a timeout) still stops the server and drops the database.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    server = start_server(args.backend)
    try:
        result = run(server, args, sizes)
    finally:
        server.stop()
        drop_database(server)
    Path(args.out).write_text(json.dumps(result, indent=1))


def run(server: ThreadlessServer, args, sizes: list[int]) -> dict:
    import httpx
    import orjson
    from django.db import connection
    from threadless.window import message_tokens

    from bench.lowerbound import PostgresLowerBound, SqliteLowerBound
    from memories.context import recall_token_cap
    from memories.models import Memory
    from memories.selectors import memory_get
    from memories.services import memory_create, memory_decorate, report_accept
    from projects.auth import key_from_plaintext

    project = key_from_plaintext(server.key).project
    if connection.vendor == "postgresql":
        lower = PostgresLowerBound(server.env["DATABASE_URL"])
        lower_name = "plain psycopg + PostgreSQL"
    else:
        lower = SqliteLowerBound(str(server.var / "lowerbound.sqlite3"))
        lower_name = "plain sqlite3"
    peer = None
    if args.peer:
        from bench.peer import Peer

        peer = Peer(str(server.var / "peer.sqlite3"))
    client = httpx.Client(
        base_url=server.url + "/v1", headers={"Authorization": f"Bearer {server.key}"}, timeout=60
    )

    out: dict = {"backend": args.backend, "lower_bound": lower_name, "sizes": {}, "window_checks": {}}

    def one_size(n: int) -> None:
        log(f"{args.backend}: preparing {n} messages")
        messages = conversation(n)
        tokens = [message_tokens(m) for m in messages]
        started = time.perf_counter()
        memory, _ = memory_create(project=project)
        populate(memory, messages)
        memory = memory_get(project=project, memory_id=memory.id)
        copy = copy_memory(memory)
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
        lower.load(n, messages, tokens)
        if peer is not None:
            peer.load(str(n), messages)
        log(f"{args.backend}: {n} loaded in {time.perf_counter() - started:.1f}s")

        new = [new_user_message(0)]
        reserved = sum(message_tokens(m) for m in new)
        if sum(tokens) + reserved > BUDGET:
            # decorate keeps the recall block's room inside the budget when the history does not
            # fit (memories.context): the bound reserves the same, so both read the same window.
            reserved += recall_token_cap(BUDGET - reserved)
        body = orjson.dumps({"messages": new, "store": False})
        counter = {"store": 0, "report": 0}

        def in_process(memory_id=memory.id):
            fresh = memory_get(project=project, memory_id=memory_id)
            return orjson.dumps(memory_decorate(memory=fresh, messages=new, store=False))

        # The messages the writes store, made before the clock starts (building one is a seeded
        # random text: ~0.05 ms that the bound's write, with its one fixed message, never paid).
        stored_new = [new_user_message(i) for i in range(1, 1001)]
        replies = [reply_message(i) for i in range(1, 1001)]

        # The writes are timed as the API runs them (memories.api.hot): by id, with no Idempotency-Key,
        # the memory row is not read first; the service's first statement scopes it to the project.
        def in_process_store(memory_id=copy.id):
            counter["store"] += 1
            return orjson.dumps(
                memory_decorate(
                    memory=Memory(id=memory_id, project=project),
                    messages=[stored_new[counter["store"] % 1000]],
                    store=True,
                    scoped=True,
                )
            )

        def http_decorate(memory_id=memory.id):
            r = client.post(
                f"/memories/{memory_id}/decorate", content=body, headers={"Content-Type": "application/json"}
            )
            assert r.status_code == 200, r.text[:300]
            return r.content

        def http_get(memory_id=memory.id):
            r = client.get(f"/memories/{memory_id}")
            assert r.status_code == 200, r.text[:300]
            return r.content

        # The three systems must return the same window.
        _, lb_window = lower.window(n, new, reserved, BUDGET)
        ours = orjson.loads(in_process())
        over_http = orjson.loads(http_decorate())
        checks = {
            "lower_bound_messages": len(lb_window),
            "decorate_messages": len(ours["messages"]),
            "decorate_equals_lower_bound": window_key(ours["messages"]) == window_key(lb_window),
            "http_equals_in_process": over_http["messages"] == ours["messages"],
        }
        if peer is not None:
            from bench.peer import as_openai

            peer_window = as_openai(peer.window(str(n), new, reserved, BUDGET))
            checks["peer_messages"] = len(peer_window)
            checks["peer_equals_lower_bound"] = window_key(peer_window) == window_key(lb_window)
        out["window_checks"][n] = checks
        log(f"{args.backend}: {n} window check {checks}")

        samples = interleaved(
            {
                "lower_bound": lambda: lower.window(n, new, reserved, BUDGET)[0],
                "decorate": in_process,
                "decorate_store": in_process_store,
                "http_decorate": http_decorate,
                "http_get_memory": http_get,
            },
            budget_s=args.budget,
        )
        row = {name: summary(values) for name, values in samples.items()}

        def report_once(memory_id=copy.id):
            counter["report"] += 1
            report_accept(
                memory=Memory(id=memory_id, project=project),
                messages=[replies[counter["report"] % 1000]],
                failures=[],
                scoped=True,
            )

        reply = reply_message(0)
        reply_tokens = message_tokens(reply)
        samples = interleaved(
            {
                "lower_bound_insert": lambda: lower.insert(n, reply, reply_tokens),
                "report": report_once,
            },
            budget_s=args.budget / 2,
        )
        row.update({name: summary(values) for name, values in samples.items()})

        if peer is not None:
            # The peer is slow on big threads (it loads the whole thread): fewer rounds there.
            reps = 20 if n <= 1000 else 5 if n <= 10_000 else 3
            warm = 1 if n <= 10_000 else 0
            peer_samples = interleaved(
                {"peer_read": lambda: peer.window(str(n), new, reserved, BUDGET)},
                warmup=warm,
                min_reps=reps,
                max_reps=reps,
                budget_s=0,
            )
            turn_samples = interleaved(
                {"peer_write": lambda: peer.turn(str(n), new_user_message(1))},
                warmup=warm,
                min_reps=reps,
                max_reps=reps,
                budget_s=0,
            )
            row.update({name: summary(values) for name, values in {**peer_samples, **turn_samples}.items()})
        out["sizes"][n] = row
        log(f"{args.backend}: {n} " + ", ".join(f"{k}={v['median']:.2f}ms" for k, v in row.items()))

        if args.profile and n == max(sizes):
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.0002)
            profiler.start()
            for _ in range(50):
                in_process()
            profiler.stop()
            Path(args.profile).write_text(profiler.output_text(unicode=False, color=False, show_all=False))

    for n in sizes:
        one_size(n)
    client.close()
    lower.close()
    if peer is not None:
        peer.close()
    return out


if __name__ == "__main__":
    main()
