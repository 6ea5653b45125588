#!/usr/bin/env bash
# Web (uvicorn) + a real Celery worker with its beat scheduler, on the embedded default.
# The worker runs under threadless_site.supervise: restarted (with back-off) when it dies, each
# death said once, loudly, here and in the worker log; /healthz/worker tells a monitor.
#
# Stopping: Ctrl-C, or SIGTERM to this script or to its whole process group (`docker stop`,
# systemd, `kill -TERM -<pgid>` on `make run`) stops both within STOP_SECONDS (default 25).
# * Each server runs in its own process group (`set -m`), so a signal to our group reaches only
#   this script, which hands ONE SIGTERM to uvicorn and to the worker's supervisor, which hands
#   one to the worker's main process (in a group of its own). (Sent to the whole group, SIGTERM
#   also killed the worker's pool children behind its back and left it in "Warm shutdown" for
#   minutes.) uvicorn then interrupts running turns cleanly; the worker finishes its jobs.
# * Whatever still runs after STOP_SECONDS is killed (SIGQUIT tells the supervisor to kill the
#   worker's group, then both groups get SIGKILL); a second Ctrl-C kills at once. Every job is
#   idempotent and acks late, so a killed one is delivered again.
set -u
cd "$(dirname "$0")/.."
BIN=.venv/bin
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
STOP_SECONDS=${STOP_SECONDS:-25}
VAR=${THREADLESS_VAR_DIR:-var}
mkdir -p "$VAR"
set -m
$BIN/python -m threadless_site.supervise --log "$VAR/worker.log" --stop-seconds $(( STOP_SECONDS > 5 ? STOP_SECONDS - 3 : 2 )) -- \
  $BIN/celery -A threadless_site worker -B --loglevel=INFO --concurrency=2 --without-gossip --without-mingle &
worker=$!
$BIN/uvicorn threadless_site.asgi:application --host "$HOST" --port "$PORT" --timeout-graceful-shutdown 20 &
web=$!
set +m

alive() { kill -0 "$1" 2>/dev/null; }

force() {
  trap '' INT TERM
  echo "killing what still runs…"
  kill -QUIT "$worker" 2>/dev/null
  sleep 0.5
  kill -KILL -- "-$worker" "-$web" 2>/dev/null
  wait "$web" "$worker" 2>/dev/null
  exit 1
}

stop() {
  # Repeated TERMs (the group's and make's own) are ignored; a second Ctrl-C forces.
  trap '' TERM
  trap force INT
  echo "stopping web ($web) and worker ($worker)…"
  kill -TERM "$web" "$worker" 2>/dev/null
  local deadline=$((SECONDS + STOP_SECONDS))
  while { alive "$web" || alive "$worker"; } && [ "$SECONDS" -lt "$deadline" ]; do
    sleep 0.2
  done
  if alive "$web" || alive "$worker"; then
    echo "still running after ${STOP_SECONDS}s"
    force
  fi
  wait "$web" "$worker" 2>/dev/null
  echo "stopped"
  exit 0
}
trap stop INT TERM
echo "worker log: $VAR/worker.log · web on http://$HOST:$PORT/ · Ctrl-C stops both"
wait -n "$web" "$worker"
stop
