#!/usr/bin/env bash
# `make run`: web (one uvicorn process) + a real Celery worker with its beat scheduler, on the
# embedded default. `make serve` (scripts/serve.sh) runs this with SERVE=1: the web server is then
# granian, THREADLESS_WEB_WORKERS processes (default: one per CPU), see docs/deployment.md.
# The worker runs under threadless_site.supervise: restarted (with back-off) when it dies, each
# death said once, loudly, here and in the worker log; /healthz/worker tells a monitor.
# WORKER=0 runs no worker here (workers run elsewhere); BEAT=0 runs the worker without beat (keep
# exactly one scheduler per deployment); WORKER_CONCURRENCY (default 2).
#
# Stopping: Ctrl-C, or SIGTERM to this script or to its whole process group (`docker stop`,
# systemd, `kill -TERM -<pgid>` on `make run`) stops both within STOP_SECONDS (default 25).
# * Each server runs in its own process group (`set -m`), so a signal to our group reaches only
#   this script, which hands ONE SIGTERM to the web server and to the worker's supervisor, which
#   hands one to the worker's main process (in a group of its own). (Sent to the whole group,
#   SIGTERM also killed the worker's pool children behind its back and left it in "Warm shutdown"
#   for minutes.) The web server then interrupts running turns cleanly; the worker finishes its jobs.
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
GRACE=$(( STOP_SECONDS > 5 ? STOP_SECONDS - 5 : 1 ))
mkdir -p "$VAR"
# This checkout's code first, whichever checkout the venv's editable install points at.
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
# THREADLESS_LOG_FORMAT=json: every line here is one JSON object, the first ones too. This script's
# own lines (say), the web servers' lines before Django configures logging (scripts/log-json.json),
# the supervisor's (threadless_site.supervise); the worker prints no banner (--quiet).
json_logs=0
[ "${THREADLESS_LOG_FORMAT:-plain}" = json ] && json_logs=1
say() {  # say MESSAGE [LEVEL]
  if [ "$json_logs" = 1 ]; then
    local text=${1//\\/\\\\}
    text=${text//\"/\\\"}
    printf '{"timestamp":"%s","level":"%s","logger":"threadless.run","message":"%s"}\n' \
      "$(date -u +%Y-%m-%dT%H:%M:%S.%3N+00:00)" "${2:-INFO}" "$text"
  else
    echo "$1"
  fi
}
log_config=()
quiet=()
[ "$json_logs" = 1 ] && log_config=(--log-config scripts/log-json.json) && quiet=(--quiet)
# Every process writes its own metric files (prometheus-client's multi-process mode); a fresh start
# of web and worker together begins from none, as that library asks, so dead processes' files don't
# pile up from one run to the next. (WORKER=0: the workers elsewhere may still write here.)
METRICS_DIR=${THREADLESS_METRICS_DIR:-$VAR/metrics}
[ "${WORKER:-1}" != 0 ] && [ -d "$METRICS_DIR" ] && find "$METRICS_DIR" -maxdepth 1 -name '*.db' -delete
beat=(-B)
[ "${BEAT:-1}" = 0 ] && beat=()
set -m
worker=
if [ "${WORKER:-1}" != 0 ]; then
  $BIN/python -m threadless_site.supervise --log "$VAR/worker.log" --stop-seconds $(( STOP_SECONDS > 5 ? STOP_SECONDS - 3 : 2 )) -- \
    $BIN/celery "${quiet[@]}" -A threadless_site worker "${beat[@]}" --loglevel=INFO --concurrency="${WORKER_CONCURRENCY:-2}" \
    --without-gossip --without-mingle &
  worker=$!
fi
if [ "${SERVE:-0}" = 1 ]; then
  # granian: its worker processes share the listening socket; the ASGI app (threadless_site.asgi)
  # runs sync views on THREADLESS_WEB_THREADS threads in each. No access log unless ACCESS_LOG=1.
  access=()
  [ "${ACCESS_LOG:-0}" = 1 ] && access=(--access-log)
  $BIN/granian --interface asgi --host "$HOST" --port "$PORT" --workers "${THREADLESS_WEB_WORKERS:-$(nproc)}" \
    --loop uvloop --http 1 --no-ws --backlog 2048 --respawn-failed-workers --workers-kill-timeout "$GRACE" \
    "${access[@]}" "${log_config[@]}" threadless_site.asgi:application &
else
  $BIN/uvicorn threadless_site.asgi:application --host "$HOST" --port "$PORT" --timeout-graceful-shutdown 20 \
    "${log_config[@]}" &
fi
web=$!
set +m
pids=("$web")
[ -n "$worker" ] && pids+=("$worker")

alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

force() {
  trap '' INT TERM
  say "killing what still runs…" WARNING
  [ -n "$worker" ] && kill -QUIT "$worker" 2>/dev/null
  sleep 0.5
  for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null; done
  wait "${pids[@]}" 2>/dev/null
  exit 1
}

stop() {
  # Repeated TERMs (the group's and make's own) are ignored; a second Ctrl-C forces.
  trap '' TERM
  trap force INT
  say "stopping web ($web) and worker (${worker:-none})…"
  kill -TERM "${pids[@]}" 2>/dev/null
  local deadline=$((SECONDS + STOP_SECONDS))
  while { alive "$web" || alive "$worker"; } && [ "$SECONDS" -lt "$deadline" ]; do
    sleep 0.2
  done
  if alive "$web" || alive "$worker"; then
    say "still running after ${STOP_SECONDS}s" WARNING
    force
  fi
  wait "${pids[@]}" 2>/dev/null
  say "stopped"
  exit 0
}
trap stop INT TERM
say "starting web on http://$HOST:$PORT/ and the worker (its log: $VAR/worker.log)…"

# The address is said once the web server answers on it: importing the app takes seconds, and
# granian's workers start serving after its main process has bound the socket. Any HTTP answer to
# GET /healthz will do (bash's /dev/tcp: no curl needed).
probe=$HOST
case $HOST in 0.0.0.0 | "") probe=127.0.0.1 ;; :: | "[::]") probe=::1 ;; esac
answers() {
  (
    exec 3<>"/dev/tcp/$probe/$PORT" || exit 1
    printf 'GET /healthz HTTP/1.0\r\nHost: %s\r\n\r\n' "$probe" >&3
    read -r -t 5 status <&3 && [[ $status == HTTP/* ]]
  ) 2>/dev/null
}
until answers; do
  alive "$web" || break
  sleep 0.2
done
alive "$web" && say "listening on http://$HOST:$PORT/ · Ctrl-C stops web and worker"
wait -n "${pids[@]}"
stop
