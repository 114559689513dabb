# Routine tasks. `make run` and `make test` work on a fresh Debian machine: they install what
# is missing (Python packages into .venv, Debian packages with apt-get) before they start.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
RUN_PACKAGES := fonts-wqy-microhei fonts-dejavu-core
# texlive: the reports' LaTeX tables are compiled by a test (booktabs is in -recommended).
TEST_PACKAGES := $(RUN_PACKAGES) chromium postgresql redis-server gettext texlive-latex-base texlive-latex-recommended
PG_URL = $(shell scripts/test-postgres.sh url)

.PHONY: run dev test test-sqlite test-postgres screenshots lint format perf clean system-run system-test messages

run: $(VENV)/.run-installed node_modules/.installed system-run
	mkdir -p var
	$(PY) manage.py migrate --no-input -v0
	$(PY) manage.py load_demo
	scripts/run.sh

# The same for changing the code: DEBUG on (Django's debug pages), a server that reloads on every change.
dev: $(VENV)/.run-installed node_modules/.installed system-run
	mkdir -p var
	$(PY) manage.py migrate --no-input -v0
	$(PY) manage.py load_demo
	scripts/run.sh --dev

test: $(VENV)/.test-installed node_modules/.installed system-test lint
	$(MAKE) --no-print-directory test-sqlite
	$(MAKE) --no-print-directory test-postgres

# The fault tests run a real Celery worker on a real Redis broker (scripts/test-redis.sh). Each
# server is started for the run and stopped after it, pass or fail, unless it was running before.
# Tests run in one process per core (pytest-xdist), at most PARALLEL; PARALLEL=0 runs them in this
# process (for a debugger). Each process has its own test database.
PARALLEL ?= 4
XDIST = $(if $(filter 0,$(PARALLEL)),,-n auto --maxprocesses $(PARALLEL))

test-sqlite: $(VENV)/.test-installed
	scripts/test-redis.sh run env YARDSTICK_TEST_REDIS_URL=$$(scripts/test-redis.sh url) $(PY) -m pytest $(XDIST)

test-postgres: $(VENV)/.test-installed
	scripts/test-postgres.sh run scripts/test-redis.sh run env DATABASE_URL=$(PG_URL) YARDSTICK_TEST_REDIS_URL=$$(scripts/test-redis.sh url) $(PY) -m pytest $(XDIST) -m "not slow and not tour"

# Browser tests that also refresh the pictures in docs/screenshots/ (look at them before committing).
screenshots: $(VENV)/.test-installed node_modules/.installed
	DOC_SCREENSHOTS=1 $(PY) -m pytest tests/e2e -q

# Refresh the translation catalogues after changing marked text (needs GNU gettext: apt-get install
# gettext); translate the new entries in locale/*/LC_MESSAGES/django.po, then compile. The compiled
# .mo files are committed, so running the app never needs gettext.
messages: $(VENV)/.run-installed
	command -v msgfmt >/dev/null || scripts/system-packages.sh gettext
	$(PY) manage.py makemessages -l zh_Hans --no-obsolete -i '.venv/*' -i 'node_modules/*' -i 'var/*' -i 'tests/*' -i 'perf/*'
	$(PY) manage.py makemessages -d djangojs -l zh_Hans --no-obsolete -i '.venv/*' -i 'node_modules/*' -i 'var/*' -i 'tests/*' -i 'perf/*' -i 'staticfiles/*' -i 'static/vendor/*'
	$(PY) manage.py compilemessages -l zh_Hans -i '.venv' -i 'node_modules' 

lint: $(VENV)/.test-installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(VENV)/.test-installed
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

perf: $(VENV)/.test-installed
	$(PY) -m perf.import_cric
	$(PY) -m perf.render
	$(PY) -m perf.generate_trance
	$(PY) -m perf.humantest_load
	$(PY) -m perf.study_load
	$(PY) -m perf.humantest_draw
	$(PY) -m perf.faults
	$(PY) -m perf.mixed_load
	$(PY) -m perf.annotation_queue --seconds 60
	$(PY) -m perf.annotation_queue --seconds 60 --think-s 2
	$(PY) -m perf.inference_throughput
	$(PY) -m perf.compare_rows

system-run:
	scripts/system-packages.sh $(RUN_PACKAGES)

system-test:
	scripts/system-packages.sh $(TEST_PACKAGES)

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.run-installed: requirements.txt | $(VENV)/bin/python
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.test-installed: requirements.txt requirements-test.txt | $(VENV)/bin/python
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-test.txt
	touch $@ $(VENV)/.run-installed

# Browser libraries (package.json, exact versions in package-lock.json); Node.js from Debian if absent.
node_modules/.installed: package.json package-lock.json
	command -v npm >/dev/null || scripts/system-packages.sh nodejs npm
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

clean:
	scripts/test-postgres.sh stop
	scripts/test-redis.sh stop
	rm -rf var .pytest_cache
