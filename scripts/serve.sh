#!/usr/bin/env bash
# `make serve`: the production web server (granian, one process per CPU: THREADLESS_WEB_WORKERS;
# a thread pool for sync views in each: THREADLESS_WEB_THREADS) + a supervised Celery worker with
# its beat scheduler (log in $THREADLESS_VAR_DIR/worker.log; WORKER=0 / BEAT=0 to leave them out).
# Settings from the environment (DATABASE_URL, CELERY_BROKER_URL, REDIS_URL, THREADLESS_*, HOST,
# PORT): see docs/deployment.md. Ctrl-C / SIGTERM stops both (scripts/run.sh).
set -u
cd "$(dirname "$0")/.."
SERVE=1 exec bash scripts/run.sh
