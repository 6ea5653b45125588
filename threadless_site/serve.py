"""The production web server: `make serve`, `.venv/bin/threadless-serve` or `python -m threadless_site.serve`.

Several uvicorn worker processes (default: one per CPU, THREADLESS_WEB_WORKERS), each running
sync views on THREADLESS_WEB_THREADS threads (threadless_site.asgi) with a database pool sized
to them (settings: THREADLESS_DB_POOL_SIZE), uvloop + httptools, no access log (--access-log for one). With several processes the parent
accepts every connection and hands it to the process holding the fewest (serving.balance:
a shared listening socket lets one process take a whole burst); it restarts a worker that dies, and
SIGTERM stops them all gracefully (running turns end EXECUTION_INTERRUPTED at their next task
boundary, as under plain uvicorn). THREADLESS_WEB_BALANCE=0 leaves that to uvicorn's supervisor.

It also runs the Celery worker with beat under threadless_site.supervise (restarted with back-off
when it dies, each death logged once, loudly; output in <var>/worker.log), stopped after the web
server on SIGTERM / Ctrl-C. `--no-worker` when workers run elsewhere, `--no-beat` on all but one
machine of a deployment.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

from threadless_site import supervise
from threadless_site.env import envbool

ROOT = Path(__file__).resolve().parents[1]
WORKER_STOP_SECONDS = 25


def default_workers() -> int:
    value = os.environ.get("THREADLESS_WEB_WORKERS", "")
    if value:
        return max(1, int(value))
    return max(1, os.cpu_count() or 1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="threadless-serve", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    parser.add_argument("--workers", type=int, default=default_workers(), help="processes (default: CPU count)")
    parser.add_argument("--threads", type=int, default=None,
                        help="sync-view threads per process (default: THREADLESS_WEB_THREADS, or 8; 1 on SQLite)")
    parser.add_argument("--graceful-timeout", type=int, default=30)
    parser.add_argument("--access-log", action="store_true", help="write uvicorn's access log (redacted)")
    parser.add_argument("--app", default="threadless_site.asgi:application",
                        help="the ASGI app (default: Threadless; the load bench serves its floor the same way)")
    parser.add_argument("--no-worker", dest="worker", action="store_false",
                        help="run no Celery worker here (default: one, supervised, for the Threadless app)")
    parser.add_argument("--no-beat", dest="beat", action="store_false",
                        help="the worker runs no beat scheduler (keep exactly one per deployment)")
    parser.add_argument("--worker-concurrency", type=int, default=int(os.environ.get("WORKER_CONCURRENCY", "2")))
    args = parser.parse_args(argv)
    # settings.LOGGING gives uvicorn's access logger its handler only when this is on: uvicorn's
    # own access_log=False is undone when Django configures logging in each worker.
    os.environ["THREADLESS_ACCESS_LOG"] = "1" if args.access_log else "0"
    if args.threads is not None:
        os.environ["THREADLESS_WEB_THREADS"] = str(args.threads)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")

    import uvicorn
    from django.core.exceptions import ImproperlyConfigured

    from serving import balance

    try:
        import uvloop  # noqa: F401

        loop = "uvloop"
    except ImportError:  # pragma: no cover - uvloop is a dependency except on Windows
        loop = "asyncio"
    print(f"threadless-serve: {args.workers} worker process(es) on http://{args.host}:{args.port}/", flush=True)
    options = dict(host=args.host, port=args.port, workers=args.workers, loop=loop, http="httptools",
                   access_log=args.access_log, timeout_graceful_shutdown=args.graceful_timeout, backlog=2048)
    try:
        balanced = args.workers > 1 and envbool("THREADLESS_WEB_BALANCE", True) and balance.supported
    except ImproperlyConfigured as exc:
        parser.error(str(exc))
    worker = start_worker(args) if args.worker and args.app == parser.get_default("app") else None
    try:
        if balanced:
            balance.run(uvicorn.Config(args.app, **options), args.workers)
        else:
            uvicorn.run(args.app, **options)
    finally:
        if worker is not None:
            stop_worker(worker)


def start_worker(args) -> subprocess.Popen:
    var = Path(os.environ.get("THREADLESS_VAR_DIR") or ROOT / "var")
    var.mkdir(parents=True, exist_ok=True)
    command = [str(Path(sys.executable).parent / "celery"), "-A", "threadless_site", "worker", "--loglevel=INFO",
               f"--concurrency={args.worker_concurrency}", "--without-gossip", "--without-mingle"]
    if args.beat:
        command.append("-B")
    print(f"threadless-serve: background worker supervised, log in {var / 'worker.log'}", flush=True)
    return supervise.spawn(command, log_path=str(var / "worker.log"), stop_seconds=WORKER_STOP_SECONDS - 5)


def stop_worker(worker: subprocess.Popen) -> None:
    """One SIGTERM to the supervisor (the worker finishes its jobs); its group killed past the limit."""
    if worker.poll() is None:
        worker.send_signal(signal.SIGTERM)
    try:
        worker.wait(timeout=WORKER_STOP_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()


if __name__ == "__main__":
    main()
