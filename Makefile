# Gavel: `make run` (embedded default) and `make test` (every test). See README.md.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# The address `make run` serves on: `make run PORT=8001`.
PORT ?= 8000

.PHONY: install run test test-fast bench schema clean

$(VENV)/.installed: requirements.txt requirements-dev.txt constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements-dev.txt -c constraints.txt
	touch $@

install: $(VENV)/.installed

# Production (README, Production): the venv with the application's packages only, no test tools.
.PHONY: install-prod
install-prod:
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r requirements.txt -c constraints.txt

# Embedded default: SQLite, eager Celery, demo policy, demo model and logins, 127.0.0.1:8000.
# The secret key and the demo logins are generated on the first run and kept in var/.
run: install
	GAVEL_EMBEDDED=1 DEBUG=$${DEBUG:-1} $(PY) manage.py migrate --noinput
	GAVEL_EMBEDDED=1 DEBUG=$${DEBUG:-1} GAVEL_DEMO_URL=http://127.0.0.1:$(PORT) $(PY) manage.py seed_demo
	GAVEL_EMBEDDED=1 DEBUG=$${DEBUG:-1} $(PY) manage.py runserver 127.0.0.1:$(PORT)

# Every test. Uses DATABASE_URL / CELERY_BROKER_URL when set (CI sets PostgreSQL and Redis).
test: install
	$(PY) -m pytest -q $(PYTEST_ARGS)

bench: install
	$(PY) benchmarks/termlists.py
	$(PY) benchmarks/judging.py
	$(PY) benchmarks/patterns.py
	$(PY) benchmarks/gateway.py

schema: install
	GAVEL_TESTING=1 $(PY) manage.py spectacular --validate --fail-on-warn --file /dev/null

clean:
	rm -rf $(VENV) gavel.sqlite3
