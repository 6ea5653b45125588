"""The broker soak's task and producer: the worker runs `mark` (`celery … worker --include
bench.soak_tasks`), each producer process publishes its share at full speed.

    python -m bench.soak_tasks produce --start 0 --count 10000 --out MARKS_FILE

`mark(n, path)` appends one line `n` to `path` (one O_APPEND write: lines from concurrent pool
processes never interleave), so the file says which messages were processed, and how often.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from bench.django_setup import SETTINGS

os.environ.setdefault("DJANGO_SETTINGS_MODULE", SETTINGS)

from celery import shared_task  # noqa: E402


@shared_task(acks_late=True, ignore_result=True)
def mark(n: int, path: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{n}\n".encode())
    finally:
        os.close(fd)


def produce(start: int, count: int, out: str) -> None:
    from threadless_site.celery import app

    failed = 0
    began = time.perf_counter()
    with app.producer_or_acquire() as producer:
        for n in range(start, start + count):
            try:
                app.send_task("bench.soak_tasks.mark", args=[n, out], producer=producer, retry=False)
            except Exception:  # noqa: BLE001 - counted: a publish that fails is reported, not retried
                failed += 1
    print(f"published {count - failed} failed {failed} seconds {time.perf_counter() - began:.2f}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["produce"])
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    produce(args.start, args.count, args.out)
    sys.exit(0)


if __name__ == "__main__":
    main()
