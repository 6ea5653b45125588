#!/usr/bin/env bash
# Web (uvicorn) + a real Celery worker with its beat scheduler, on the embedded default.
# Ctrl-C (or SIGTERM) stops both; uvicorn's own SIGTERM handling interrupts running turns cleanly.
set -u
cd "$(dirname "$0")/.."
BIN=.venv/bin
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
$BIN/celery -A threadless_site worker -B --loglevel=INFO --concurrency=2 --without-gossip --without-mingle \
  > var/worker.log 2>&1 &
worker=$!
$BIN/uvicorn threadless_site.asgi:application --host "$HOST" --port "$PORT" --timeout-graceful-shutdown 30 &
web=$!
stop() {
  trap - INT TERM
  echo "stopping web ($web) and worker ($worker)…"
  kill -TERM "$web" "$worker" 2>/dev/null
  wait "$web" "$worker" 2>/dev/null
  exit 0
}
trap stop INT TERM
echo "worker log: var/worker.log · web on http://$HOST:$PORT/ · Ctrl-C stops both"
wait -n "$web" "$worker"
stop
