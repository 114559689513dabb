#!/usr/bin/env bash
# Start the Celery worker and the web server together. Ctrl-C, SIGTERM or SIGHUP to this script
# (or to its process group) stops both, and everything they started, within a few seconds; so
# does either of them exiting.
#
#   scripts/run.sh         `make run`: the app as it is deployed (DEBUG off, its own error pages,
#                          gunicorn, static files collected and served by WhiteNoise), on plain
#                          HTTP on the loopback address: a demo or a lab's own machine.
#   scripts/run.sh --dev   `make dev`: for changing the code (DEBUG on, Django's debug pages,
#                          runserver reloading on every change). Never on a shared network.
#
# Each of the two runs in a process group of its own, so that the script stops them whole: the
# server (gunicorn's master and workers, or Django's autoreloader and the child that serves) and
# the worker (its main process and its pool) are sent SIGTERM, and whatever is left after
# STOP_GRACE_S seconds gets SIGKILL. A worker's warm shutdown waits for the tasks it is running,
# however long they take; a task cut short here is declared lost by the next worker to start, as
# after any crash.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
VAR_DIR=${YARDSTICK_VAR_DIR:-var}
PORT=${PORT:-8000}
STOP_GRACE_S=${STOP_GRACE_S:-5}
MODE=${1:-}
if [ "$MODE" = "--dev" ]; then
  export DJANGO_DEBUG=${DJANGO_DEBUG:-1}
else
  # DEBUG off: a 404 lists no URLs and a 500 shows no settings. Plain HTTP on loopback, so the
  # HTTPS-only defaults that DEBUG off brings are relaxed here (a real site keeps them: docs/admin.md).
  export DJANGO_DEBUG=${DJANGO_DEBUG:-0}
  export DJANGO_SECURE_SSL_REDIRECT=${DJANGO_SECURE_SSL_REDIRECT:-0}
  export DJANGO_SECURE_HSTS_SECONDS=${DJANGO_SECURE_HSTS_SECONDS:-0}
  export DJANGO_SESSION_COOKIE_SECURE=${DJANGO_SESSION_COOKIE_SECURE:-0}
  export DJANGO_CSRF_COOKIE_SECURE=${DJANGO_CSRF_COOKIE_SECURE:-0}
fi
mkdir -p "$VAR_DIR"
# The pages' CSS and scripts, where WhiteNoise serves them from once DEBUG is off.
[ "$MODE" = "--dev" ] || $PY manage.py collectstatic --no-input -v0

worker='' server='' stopping=''
group_alive() { [ -n "$1" ] && kill -0 -- "-$1" 2>/dev/null; }
stop() {
  [ -z "$stopping" ] || return 0
  stopping=1
  trap '' INT TERM HUP # a second Ctrl-C does not cut the stopping short
  # The worker's main process alone: it stops its own pool (a pool process signalled directly dies
  # with its task, and the main process can then wait on it).
  [ -z "$worker" ] || kill -TERM "$worker" 2>/dev/null || true
  [ -z "$server" ] || kill -TERM -- "-$server" 2>/dev/null || true
  local deadline=$((SECONDS + STOP_GRACE_S))
  while { group_alive "$worker" || group_alive "$server"; } && [ "$SECONDS" -lt "$deadline" ]; do
    sleep 0.1
  done
  for group in $worker $server; do kill -KILL -- "-$group" 2>/dev/null || true; done
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

set -m # background jobs get process groups of their own (their pid is the group id)
# -B: the worker also sends the beat schedule (the reaper of lost jobs), as one machine needs.
.venv/bin/celery -A yardstick worker -B --loglevel=INFO --concurrency=2 </dev/null >"$VAR_DIR/worker.log" 2>&1 &
worker=$!
if [ "$MODE" = "--dev" ]; then
  $PY manage.py runserver "127.0.0.1:$PORT" </dev/null &
else
  # /metrics adds up the request times of every gunicorn process from files here (emptied at start).
  export PROMETHEUS_MULTIPROC_DIR="$VAR_DIR/prometheus"
  rm -rf "$PROMETHEUS_MULTIPROC_DIR" && mkdir -p "$PROMETHEUS_MULTIPROC_DIR"
  .venv/bin/gunicorn yardstick.wsgi --bind "127.0.0.1:$PORT" --workers "${WEB_WORKERS:-2}" --threads 4 \
    --graceful-timeout 3 --no-control-socket --access-logfile - </dev/null &
fi
server=$!
set +m # no job control from here: a Ctrl-C reaches this script, never the two groups directly
echo "worker started (pid $worker, log $VAR_DIR/worker.log)"
echo "Yardstick on http://127.0.0.1:$PORT/  (demo users in README.md; Ctrl-C stops the server and the worker)"
# Until a signal comes (a trapped signal ends the wait at once) or one of the two exits.
status=0
wait -n || status=$?
exit "$status"
