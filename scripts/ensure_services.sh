#!/usr/bin/env bash
# Start PostgreSQL and Redis if they are not running (as on a fresh machine of this kind).
set -u
if ! pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
  if ! command -v pg_ctlcluster >/dev/null; then apt-get update -q && apt-get install -y -q postgresql redis-server; fi
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
fi
if ! redis-cli -h 127.0.0.1 ping >/dev/null 2>&1; then
  command -v redis-server >/dev/null || (apt-get update -q && apt-get install -y -q redis-server)
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && break; sleep 0.5; done
fi
pg_isready -h 127.0.0.1 -p 5432 && redis-cli -h 127.0.0.1 ping
psql -h 127.0.0.1 -d postgres -tc "SELECT 1 FROM pg_database WHERE datname = 'threadless'" | grep -q 1 || createdb -h 127.0.0.1 threadless
