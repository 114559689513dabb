#!/usr/bin/env bash
# Start the Celery worker and the web server together; Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
# A local demo: debug pages, plain HTTP (production runs with DEBUG off: docs/admin.md).
export DJANGO_DEBUG=${DJANGO_DEBUG:-1}
mkdir -p "${YARDSTICK_VAR_DIR:-var}"
.venv/bin/celery -A yardstick worker --loglevel=INFO --concurrency=2 >"${YARDSTICK_VAR_DIR:-var}/worker.log" 2>&1 &
worker=$!
trap 'kill $worker 2>/dev/null; wait $worker 2>/dev/null' EXIT INT TERM
echo "worker started (pid $worker, log ${YARDSTICK_VAR_DIR:-var}/worker.log)"
echo "Yardstick on http://127.0.0.1:${PORT:-8000}/  (demo users in README.md)"
$PY manage.py runserver "127.0.0.1:${PORT:-8000}"
