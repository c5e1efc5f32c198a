# Werkbank. `make demo` to try it, `make test` to test it.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1:8000

.PHONY: venv demo migrate seed test lint bench format clean serve messages

# The German catalogue, compiled from locale/de/LC_MESSAGES/django.po by Babel (pure Python: no gettext
# tools needed to build). `make messages` collects new strings into the .po file (that needs xgettext).
MO := locale/de/LC_MESSAGES/django.mo

venv: $(VENV)/.installed $(MO)

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $@

$(MO): locale/de/LC_MESSAGES/django.po $(VENV)/.installed
	$(VENV)/bin/pybabel -q compile --domain django --directory locale --locale de

# makemessages reads an ignore pattern "dir/*" as "any directory named dir", so 'bench/*' also skipped
# templates/bench/: the benchmark scripts are ignored by their file names instead.
messages: venv
	$(PY) manage.py makemessages --locale de --no-obsolete --no-location --ignore '.venv/*' --ignore 'var/*' --ignore 'probe/*' \
		--ignore 'tests/*' --ignore 'bench_*.py' --ignore 'docs/*'

migrate: venv
	$(PY) manage.py migrate --noinput

seed: migrate
	$(PY) manage.py seed_demo

demo: seed
	@echo "Serving Werkbank on http://$(HOST)/  (admin: http://$(HOST)/admin/, API docs: http://$(HOST)/api/docs/)"
	$(PY) manage.py runserver $(HOST)

# The production profile under gunicorn with a Celery worker and beat (Procfile), against PostgreSQL and
# Redis (both required). SECRET_KEY, ALLOWED_HOSTS, WERKBANK_SECRETS_KEYS and WERKBANK_SIGNING_KEYS come from
# the environment or from a .env file, which honcho reads (README: Production serving).
serve: venv
	@export PATH="$(CURDIR)/$(VENV)/bin:$$PATH" WERKBANK_ENV="$${WERKBANK_ENV:-production}" \
		WERKBANK_REQUIRE_SERVICES=1 && source scripts/services.sh && \
	honcho run python manage.py migrate --noinput && \
	honcho run python manage.py collectstatic --noinput && \
	exec honcho start -p "$${PORT:-8000}"

test: venv
	@source scripts/services.sh && $(VENV)/bin/pytest $(PYTEST_ARGS)

lint: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	PYTHONPATH=$(CURDIR) $(VENV)/bin/lint-imports
	$(VENV)/bin/mypy $(wildcard */services.py */services */selectors.py */selectors */gates.py */gates)
	$(PY) scripts/check_sizes.py
	$(PY) manage.py check
	$(PY) manage.py makemigrations --check --dry-run
	WERKBANK_ENV=production SECRET_KEY=lint-only-$$(printf 'x%.0s' {1..60})-Zq7 ALLOWED_HOSTS=werkbank.example \
		WERKBANK_SECRETS_KEYS=bGludC1vbmx5LWtleS1ub3QtZm9yLXByb2R1Y3Rpb24= \
		WERKBANK_SIGNING_KEYS=bGludC1vbmx5LXNpZ25pbmcta2V5LW5vdC1yZWFsISE= \
		DATABASE_URL=postgres://lint:lint@127.0.0.1:9/lint-never-connected REDIS_URL=redis://127.0.0.1:9/0 \
		$(PY) manage.py check --deploy --fail-level WARNING
	$(PY) manage.py spectacular --validate --fail-on-warn --file /dev/null

bench: venv
	@source scripts/services.sh && $(PY) -m bench $(BENCH_ARGS)

format: venv
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache
