#!/usr/bin/env bash
# A throw-away Redis server for the tests that run the distributed set-up (a real Celery worker
# on a Redis broker): `start` makes sure one listens on 127.0.0.1:$REDISPORT, `stop` stops it,
# `url` prints its URL, `status` succeeds if it runs. `run COMMAND...` runs a command with the
# server up and stops the server afterwards (also on failure or Ctrl-C) if it was not running
# before: what `make test` does. Nothing is saved to disk.
set -euo pipefail
REDISPORT=${YARDSTICK_REDISPORT:-63799}
REDISDIR=${YARDSTICK_REDISDIR:-/tmp/yardstick-redis-$(id -u)}
command -v redis-server >/dev/null || { echo "redis-server not found (Debian package redis-server)" >&2; exit 1; }

case "${1:-}" in
  start)
    if ! redis-cli -p "$REDISPORT" ping >/dev/null 2>&1; then
      mkdir -p "$REDISDIR"
      redis-server --port "$REDISPORT" --bind 127.0.0.1 --daemonize yes --dir "$REDISDIR" \
        --save "" --appendonly no --logfile "$REDISDIR/redis.log" --pidfile "$REDISDIR/redis.pid"
      for _ in $(seq 50); do redis-cli -p "$REDISPORT" ping >/dev/null 2>&1 && exit 0; sleep 0.1; done
      cat "$REDISDIR/redis.log" >&2; exit 1
    fi
    ;;
  stop)
    redis-cli -p "$REDISPORT" shutdown nosave >/dev/null 2>&1 || true
    ;;
  status)
    redis-cli -p "$REDISPORT" ping >/dev/null 2>&1
    ;;
  run)
    shift
    if ! "$0" status; then
      "$0" start
      trap '"$0" stop' EXIT
    fi
    "$@"
    ;;
  url)
    echo "redis://127.0.0.1:$REDISPORT"
    ;;
  *)
    echo "usage: $0 start|stop|status|url|run COMMAND..." >&2; exit 2 ;;
esac
