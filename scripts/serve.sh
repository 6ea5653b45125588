#!/usr/bin/env bash
# `make serve`: the production web server (one uvicorn process per CPU, a thread pool for sync
# views in each) + a Celery worker with its beat scheduler. Settings from the environment
# (DATABASE_URL, CELERY_BROKER_URL, REDIS_URL, THREADLESS_*): see docs/deployment.md.
set -u
cd "$(dirname "$0")/.."
BIN=.venv/bin
$BIN/celery -A threadless_site worker -B --loglevel=INFO --concurrency="${WORKER_CONCURRENCY:-2}" \
  --without-gossip --without-mingle > var/worker.log 2>&1 &
worker=$!
$BIN/python -m threadless_site.serve "$@" &
web=$!
stop() {
  trap - INT TERM
  echo "stopping web ($web) and worker ($worker)…"
  kill -TERM "$web" "$worker" 2>/dev/null
  wait "$web" "$worker" 2>/dev/null
  exit 0
}
trap stop INT TERM
echo "worker log: var/worker.log · Ctrl-C stops both"
wait -n "$web" "$worker"
stop
