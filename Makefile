# Gavel: `make run` (embedded default) and `make test` (every test). See README.md.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# The address `make run` serves on: `make run PORT=8001`.
PORT ?= 8000

# The tests run on pytest-xdist workers, one per core and one more for the tests that mostly wait (tests/ordering.py),
# at most 4: `make test TEST_WORKERS=0` runs them in one process. Each worker has its own test database, Redis
# databases and metrics folder (tests/parallel.py).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
# Tests are handed out in collection order, the longest first (tests/ordering.py), so the workers end together.
XDIST := -n $(TEST_WORKERS) --maxprocesses 4 --dist loadgroup --no-loadscope-reorder
# Tests compile to bytecode even where the environment says not to (PYTHONDONTWRITEBYTECODE): without the cache
# each pytest worker rewrote the asserts of 689 modules at every start (27 s of CPU for collecting, against 13 s),
# and every server or worker a test starts compiled Gavel again. The files go to __pycache__/ (ignored by git).
BYTECODE := PYTHONDONTWRITEBYTECODE=
# What `make test-fast` leaves out: the real client libraries, the browser and the README's fresh copy.
SLOW_MARKERS := not clients and not browser and not readme

.PHONY: help install install-prod run test test-fast bench schema clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z-]+):.*## (.*)$$/\1\t\2/' | expand -t 14

$(VENV)/.installed: requirements.txt requirements-dev.txt constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements-dev.txt -c constraints.txt
	touch $@

install: $(VENV)/.installed ## Make .venv with every dependency, the test tools included

# Production (README, Production): the venv with the application's packages only, no test tools.
install-prod: ## Make .venv with the application's packages only (production: no test tools)
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements.txt -c constraints.txt

# Embedded default: SQLite, eager Celery, demo policy, demo model and logins, 127.0.0.1:8000.
# The secret key and the demo logins are generated on the first run and kept in var/.
run: install ## Serve the embedded default (SQLite, eager Celery, the demo) on 127.0.0.1:8000, or PORT=
	GAVEL_EMBEDDED=1 DEBUG=$${DEBUG:-1} $(PY) manage.py migrate --noinput
	GAVEL_EMBEDDED=1 DEBUG=$${DEBUG:-1} GAVEL_DEMO_URL=http://127.0.0.1:$(PORT) $(PY) manage.py seed_demo
	GAVEL_EMBEDDED=1 DEBUG=$${DEBUG:-1} $(PY) manage.py runserver 127.0.0.1:$(PORT)

# Every test. Uses DATABASE_URL / CELERY_BROKER_URL when set (CI sets PostgreSQL and Redis).
test: install ## Run every test, on every core (and print the 30 slowest)
	$(BYTECODE) $(PY) -m pytest -q $(XDIST) --durations=30 $(PYTEST_ARGS)

test-fast: install ## Run the tests without real clients, browser and README copy: a quick loop
	$(BYTECODE) $(PY) -m pytest -q $(XDIST) -m "$(SLOW_MARKERS)" $(PYTEST_ARGS)

bench: install ## Run the benchmarks in benchmarks/
	$(PY) benchmarks/termlists.py
	$(PY) benchmarks/judging.py
	$(PY) benchmarks/patterns.py
	$(PY) benchmarks/gateway.py

schema: install ## Validate the OpenAPI schema
	GAVEL_TESTING=1 $(PY) manage.py spectacular --validate --fail-on-warn --file /dev/null

clean: ## Remove .venv and the embedded default's database
	rm -rf $(VENV) gavel.sqlite3
