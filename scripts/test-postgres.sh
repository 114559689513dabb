#!/usr/bin/env bash
# A throw-away PostgreSQL server for the test suite: `start` prints nothing but makes sure a
# server listens on 127.0.0.1:$PGPORT with trust auth; `stop` stops it; `url` prints its URL;
# `status` succeeds if it runs. `run COMMAND...` runs a command with the server up and stops the
# server afterwards (also on failure or Ctrl-C) if it was not running before: what `make test` does.
set -euo pipefail
PGPORT=${YARDSTICK_PGPORT:-54329}
PGDIR=${YARDSTICK_PGDIR:-/tmp/yardstick-pg-$(id -u)}
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$bindir" ] || { echo "PostgreSQL server binaries not found (Debian package postgresql)" >&2; exit 1; }

run_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
  start)
    if [ ! -s "$PGDIR/data/PG_VERSION" ]; then
      mkdir -p "$PGDIR"
      [ "$(id -u)" -eq 0 ] && chown postgres "$PGDIR"
      run_as_owner "$bindir/initdb" -D "$PGDIR/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$PGDIR/initdb.log" 2>&1 \
        || { cat "$PGDIR/initdb.log" >&2; exit 1; }
    fi
    if ! run_as_owner "$bindir/pg_ctl" -D "$PGDIR/data" status >/dev/null 2>&1; then
      run_as_owner "$bindir/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -t 60 \
        -o "-p $PGPORT -k $PGDIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" start >/dev/null \
        || { cat "$PGDIR/server.log" >&2; exit 1; }
    fi
    ;;
  stop)
    run_as_owner "$bindir/pg_ctl" -D "$PGDIR/data" -m fast stop >/dev/null 2>&1 || true
    ;;
  status)
    run_as_owner "$bindir/pg_ctl" -D "$PGDIR/data" status >/dev/null 2>&1
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
    echo "postgres://postgres@127.0.0.1:$PGPORT/yardstick"
    ;;
  *)
    echo "usage: $0 start|stop|status|url|run COMMAND..." >&2; exit 2 ;;
esac
