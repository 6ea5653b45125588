#!/usr/bin/env bash
# `make serve`: the production web server (one uvicorn process per CPU, a thread pool for sync
# views in each) + a supervised Celery worker with its beat scheduler (`threadless-serve` starts
# it; log in $THREADLESS_VAR_DIR/worker.log). Settings from the environment (DATABASE_URL,
# CELERY_BROKER_URL, REDIS_URL, THREADLESS_*): see docs/deployment.md. Ctrl-C / SIGTERM stops both.
set -u
cd "$(dirname "$0")/.."
exec .venv/bin/python -m threadless_site.serve "$@"
