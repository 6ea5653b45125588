"""Threadless settings, read from the environment (see .env.example).

SQLite and an embedded Celery broker are the defaults, so a fresh checkout
runs with no services. Production sets DATABASE_URL, CELERY_BROKER_URL and REDIS_URL.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from threadless_site.env import envbool, envfloat, envint, envkeylist, envlist, envstr
from threadless_site.keyfiles import (
    DEV_SECRET_KEY,
    install_secret,
    private_var_dir,
    proxy_ssl_header,
    secret_store_keys,
)

BASE_DIR = Path(__file__).resolve().parent.parent
# Private to the account running Threadless: 0700, and files created 0600 (keyfiles.private_var_dir).
VAR_DIR = private_var_dir(Path(envstr("THREADLESS_VAR_DIR", str(BASE_DIR / "var"))).resolve())

# DJANGO_DEBUG is the documented name; DEBUG is kept for existing deployments.
DEBUG = envbool("DJANGO_DEBUG", envbool("DEBUG", False))
# SECRET_KEY comes from the environment, else from a per-install file under the var dir (created
# 0600 on first use). The value once committed in this repository is refused unless DEBUG is on.
SECRET_KEY = envstr("SECRET_KEY", "") or install_secret(VAR_DIR / "secret_key")
if SECRET_KEY == DEV_SECRET_KEY and not DEBUG:
    raise ImproperlyConfigured(
        "SECRET_KEY is the development value committed in the repository: set SECRET_KEY to a long "
        "random value (or unset it to use the per-install key in $THREADLESS_VAR_DIR/secret_key), "
        "or set DEBUG=true for local development."
    )
# Older keys, still accepted for sessions, signatures and API-key hashes while they rotate out.
SECRET_KEY_FALLBACKS = envlist("SECRET_KEY_FALLBACKS", "")
ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver,[::1]")
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "django_htmx",
    "template_partials",
    # The layers, lowest first (docs/architecture.md); threadless_site holds the cross-app commands.
    "projects",
    "providers",
    "webhooks",
    "memories",
    "chat",
    "proxy",
    "console",
    "threadless_site",
    # /v1/docs serves Redoc from our own static files (no CDN: it must work offline).
    "drf_spectacular_sidecar",
]

MIDDLEWARE = [
    "common.http.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "common.http.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Outside ApiErrorMiddleware: the proxy's routes answer errors in their provider's shape.
    "proxy.provider_errors.ProviderErrorMiddleware",
    "common.http.middleware.ApiErrorMiddleware",
]

ROOT_URLCONF = "threadless_site.urls"
WSGI_APPLICATION = "threadless_site.wsgi.application"
ASGI_APPLICATION = "threadless_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # The site's pages are this package's templates/ (APP_DIRS), so the server's wheel carries them.
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASE_URL = envstr("DATABASE_URL", f"sqlite:///{VAR_DIR / 'threadless.sqlite3'}")
# Connections are persistent per thread (DB_CONN_MAX_AGE seconds, default 300): opening one costs
# more than most queries (SQLite: the file and its PRAGMAs, ~0.5 ms; PostgreSQL: a round trip and
# auth). The web threads are a fixed pool (threadless_site.asgi), so the count stays bounded.
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=envint("DB_CONN_MAX_AGE", 300))}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and the worker write at once: WAL, a busy timeout and IMMEDIATE
    # transactions keep them from failing with "database is locked".
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["TEST"] = {"NAME": envstr("THREADLESS_TEST_DB", str(VAR_DIR / "test.sqlite3"))}
IS_SQLITE = DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
# Serving (threadless_site.asgi): sync views run on a pool of this many threads per web process,
# so a process has more than one request in flight while they wait on the database; 0 runs
# them on Django's one thread per process, as plain ASGI does. SQLite has one writer at a time:
# a second thread there only queues on its write lock and contends for the GIL, 1.13-1.36x the CPU
# per turn of one thread under load (bench/load/, docs/tuning/serving.md).
THREADLESS_WEB_THREADS = envint("THREADLESS_WEB_THREADS", 1 if IS_SQLITE else 8)
# decorate and report (POST) go from the ASGI entry point straight to their handler on those
# threads, without Django's request cycle (memories.api.hot); 0 sends them through Django (same handler).
THREADLESS_HOT_ROUTES = envbool("THREADLESS_HOT_ROUTES", True)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Persistent connections (above) are health-checked before reuse in each request, so a
    # database that refuses connections still answers 503 at once. THREADLESS_DB_POOL_SIZE=N > 0
    # uses Django's native psycopg pool instead (N connections per process; size it to the web
    # threads + THREADLESS_STREAM_WORKERS + 2, since a checkout waits THREADLESS_DB_POOL_TIMEOUT
    # seconds for a free connection).
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # The check is Django's `SELECT 1` only for a connection idle longer than this many seconds (or
    # whose socket has something to read: a terminated backend's last words); a connection in
    # steady use is checked by its socket, without a round trip (common.pgbackend).
    DATABASES["default"]["ENGINE"] = "common.pgbackend"
    THREADLESS_DB_HEALTH_CHECK_IDLE = envfloat("THREADLESS_DB_HEALTH_CHECK_IDLE", 1.0)
    THREADLESS_DB_POOL_SIZE = envint("THREADLESS_DB_POOL_SIZE", 0)
    if THREADLESS_DB_POOL_SIZE > 0:
        DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps the connections
        DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
            "min_size": 1,
            "max_size": THREADLESS_DB_POOL_SIZE,
            "max_idle": 300,
            "timeout": envint("THREADLESS_DB_POOL_TIMEOUT", 5),
        }
    # The hot path's fixed statements (decorate's and report's, the memory lookups) are prepared on
    # each connection at their first use, so PostgreSQL parses and plans them once per connection,
    # not on every call (common.db.plain_cursor). On by default when connections are kept (a new
    # connection per request would prepare each statement again, one more round trip each); 0 turns
    # it off, as for a pooler that cannot keep prepared statements (PgBouncer in transaction mode:
    # docs/deployment.md).
    THREADLESS_DB_PREPARE = envbool(
        "THREADLESS_DB_PREPARE", DATABASES["default"]["CONN_MAX_AGE"] != 0 or THREADLESS_DB_POOL_SIZE > 0
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = envstr("REDIS_URL", "")
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    # Nothing shared lives in Django's cache (the sign-in throttle and the rate limits count in
    # common.counters), so the embedded default needs no cache table: `migrate` is the only schema step.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/manage/login/"
LOGIN_REDIRECT_URL = "/manage/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
# The console's and the widget's files are this package's static/ (the app finder), so the wheel carries them.
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

X_FRAME_OPTIONS = "DENY"
# The HTML pages' Content-Security-Policy (common.http.csp adds `frame-ancestors 'none'`): this
# origin's scripts, styles and connections only; no inline script or style attribute, no eval.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'"
)
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_HTTPONLY = True

# HTTPS in production (all off by default so `make run` serves http on 127.0.0.1).
SECURE_SSL_REDIRECT = envbool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = envbool("SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = envbool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = envbool("CSRF_COOKIE_SECURE", False)
# Behind a TLS-terminating proxy: the header it sets, e.g. "X-Forwarded-Proto" (value "https").
SECURE_PROXY_SSL_HEADER = proxy_ssl_header(envstr("SECURE_PROXY_SSL_HEADER", ""))
# The /healthz and /readyz probes come over plain http from the load balancer.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^healthz/worker$", r"^readyz$", r"^metrics$"]

# --- Threadless ---------------------------------------------------------------------------------

# The API's own body limit (413 payload_too_large); Django's is raised above it so ours answers.
THREADLESS_MAX_BODY_BYTES = envint("THREADLESS_MAX_BODY_BYTES", 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = THREADLESS_MAX_BODY_BYTES + 1024

THREADLESS_RATE_LIMIT_PER_MINUTE = envint("THREADLESS_RATE_LIMIT_PER_MINUTE", 1200)
# Memory files (Anthropic's memory tool, memories.services.files): caps per file, per memory (files
# and directories) and on a memory's total bytes; a command past one is refused with a text saying so.
# The contents a change replaced are kept as versions within the same total bytes and at most
# THREADLESS_MEMORY_FILE_VERSIONS_MAX of them per memory: the oldest go first, no write is refused.
THREADLESS_MEMORY_FILE_MAX_BYTES = envint("THREADLESS_MEMORY_FILE_MAX_BYTES", 256 * 1024)
THREADLESS_MEMORY_FILES_MAX = envint("THREADLESS_MEMORY_FILES_MAX", 500)
THREADLESS_MEMORY_FILES_MAX_TOTAL_BYTES = envint("THREADLESS_MEMORY_FILES_MAX_TOTAL_BYTES", 4 * 1024 * 1024)
THREADLESS_MEMORY_FILE_VERSIONS_MAX = envint("THREADLESS_MEMORY_FILE_VERSIONS_MAX", 100)
# API keys (projects.auth): each process keeps the rows it looked up for this long, checked on every
# request against the deployment's key generation in the counter store, which every change of a
# key or project bumps, so a revocation holds from the next request on every process. 0 = off.
THREADLESS_KEY_CACHE_SECONDS = envint("THREADLESS_KEY_CACHE_SECONDS", 30)
# An Idempotency-Key's answer is replayed for this long.
THREADLESS_IDEMPOTENCY_HOURS = envint("THREADLESS_IDEMPOTENCY_HOURS", 24)
# Rate limits and usage counters (common.counters): Redis when REDIS_URL is set, otherwise this
# SQLite file of their own (never the application database). Usage totals are copied into
# ApiCall / ProjectUsage by the `usage-flush` beat task every THREADLESS_USAGE_FLUSH_SECONDS.
# Beside the SQLite database by default, so every process sharing that database shares them.
_COUNTERS_DEFAULT = (
    str(Path(DATABASES["default"]["NAME"]).with_suffix("")) + "-counters.sqlite3"
    if IS_SQLITE
    else str(VAR_DIR / "counters.sqlite3")
)
THREADLESS_COUNTERS_PATH = envstr("THREADLESS_COUNTERS_PATH", _COUNTERS_DEFAULT)
THREADLESS_USAGE_FLUSH_SECONDS = envint("THREADLESS_USAGE_FLUSH_SECONDS", 5)
# The longest a SQLite writer waits for the writers' lock (common.writelock) before a 503.
THREADLESS_WRITE_LOCK_TIMEOUT = envfloat("THREADLESS_WRITE_LOCK_TIMEOUT", 5.0)
# Outbound calls (providers.egress): hosts/CIDRs reachable although not global; and the provider keys
# from the environment an agent may name, each pinned to where it may be sent (NAME = its
# provider's official host under /v1 only; NAME@host[:port][/path] adds a destination).
THREADLESS_EGRESS_ALLOW = envlist("THREADLESS_EGRESS_ALLOW", "")
THREADLESS_PROVIDER_ENV_ALLOW = envkeylist(
    "THREADLESS_PROVIDER_ENV_ALLOW", "OPENAI_API_KEY,ANTHROPIC_API_KEY"
)
# What an upstream may send (providers.bounded), counted in decoded bytes (decompression included):
# an answer read whole (proxy JSON, llm and background model calls, embeddings, http_call), one
# event stream, and one frame of it. Past a cap the proxy answers 502 and a task fails.
THREADLESS_UPSTREAM_MAX_BYTES = envint("THREADLESS_UPSTREAM_MAX_BYTES", 8 * 1024 * 1024)
THREADLESS_UPSTREAM_STREAM_MAX_BYTES = envint("THREADLESS_UPSTREAM_STREAM_MAX_BYTES", 64 * 1024 * 1024)
THREADLESS_UPSTREAM_FRAME_MAX_BYTES = envint("THREADLESS_UPSTREAM_FRAME_MAX_BYTES", 4 * 1024 * 1024)
# The proxy's upstream pool (proxy.upstream), per web process: its size, how long a call waits for
# a free connection (then 503 + Retry-After), and how many calls one project may have open at once
# (the next one is 503 + Retry-After at once; 0 = no cap).
THREADLESS_PROXY_MAX_CONNECTIONS = envint("THREADLESS_PROXY_MAX_CONNECTIONS", 200)
THREADLESS_PROXY_POOL_TIMEOUT = envfloat("THREADLESS_PROXY_POOL_TIMEOUT", 5.0)
THREADLESS_PROXY_PROJECT_CONCURRENCY = envint("THREADLESS_PROXY_PROJECT_CONCURRENCY", 32)
# The proxy lends those environment keys to projects (api_key_env) only when the operator opts in:
# anyone with a project key could otherwise spend the operator's provider account.
THREADLESS_PROXY_ENV_KEYS = envbool("THREADLESS_PROXY_ENV_KEYS", False)
# End users (publishable keys, public by design): limits on top of the per-key bucket so a
# stranger can neither farm the tenant's model budget nor lock the real end users out.
# 0 turns a limit off. An agent's config `limits` overrides the last two for that agent.
THREADLESS_END_USER_RATE_PER_IP_PER_MINUTE = envint("THREADLESS_END_USER_RATE_PER_IP_PER_MINUTE", 60)
THREADLESS_END_USER_RATE_PER_CONVERSATION_PER_MINUTE = envint(
    "THREADLESS_END_USER_RATE_PER_CONVERSATION_PER_MINUTE", 30
)
THREADLESS_END_USER_MAX_INPUT_CHARS = envint("THREADLESS_END_USER_MAX_INPUT_CHARS", 4000)
THREADLESS_END_USER_CONCURRENT_TURNS = envint("THREADLESS_END_USER_CONCURRENT_TURNS", 8)
THREADLESS_END_USER_TURNS_PER_DAY = envint("THREADLESS_END_USER_TURNS_PER_DAY", 2000)
# Turns: streamed turns run on one bounded thread pool per process (a full pool answers 503); a
# running turn holds a lease, renewed while it runs, so a dead process's turn reads interrupted.
THREADLESS_STREAM_WORKERS = envint("THREADLESS_STREAM_WORKERS", 32)
THREADLESS_TURN_LEASE_SECONDS = envint("THREADLESS_TURN_LEASE_SECONDS", 30)
THREADLESS_SSE_KEEPALIVE_SECONDS = envfloat("THREADLESS_SSE_KEEPALIVE_SECONDS", 15)
# Background memory: the outbox (a claim older than STALE is re-queued; the sweep runs every
# SWEEP seconds; a row that failed MAX_ATTEMPTS times is parked, not retried), optional
# per-project retention (Project.retention_days) swept every RETENTION_SWEEP seconds, and an
# optional custom fact extractor class (dotted path) used when a project has no model configured.
THREADLESS_OUTBOX_STALE_SECONDS = envint("THREADLESS_OUTBOX_STALE_SECONDS", 300)
THREADLESS_OUTBOX_SWEEP_SECONDS = envint("THREADLESS_OUTBOX_SWEEP_SECONDS", 30)
THREADLESS_OUTBOX_MAX_ATTEMPTS = envint("THREADLESS_OUTBOX_MAX_ATTEMPTS", 10)
THREADLESS_RETENTION_SWEEP_SECONDS = envint("THREADLESS_RETENTION_SWEEP_SECONDS", 3600)
THREADLESS_FACT_EXTRACTOR = envstr("THREADLESS_FACT_EXTRACTOR", "")
# Webhooks (webhooks/): how often the sweep sends deliveries whose retry is due (or whose publish
# was lost); the first retry comes about 10 s after a failure plus up to this long.
THREADLESS_WEBHOOK_SWEEP_SECONDS = envint("THREADLESS_WEBHOOK_SWEEP_SECONDS", 10)
# Semantic recall (memories/embeddings/): local (the default: MiniLM in-process, lexical when its runtime is
# not installed) | off (lexical only) | openai; a project's model_config["embeddings"] wins.
THREADLESS_EMBEDDINGS = envstr("THREADLESS_EMBEDDINGS", "local")
THREADLESS_EMBEDDINGS_MODEL = envstr("THREADLESS_EMBEDDINGS_MODEL", "")
THREADLESS_EMBEDDINGS_BASE_URL = envstr("THREADLESS_EMBEDDINGS_BASE_URL", "")
THREADLESS_EMBEDDINGS_API_KEY_ENV = envstr("THREADLESS_EMBEDDINGS_API_KEY_ENV", "")
# The secret store's own Fernet keys, newest first (comma-separated); unset: a per-install key file.
THREADLESS_SECRET_STORE_KEYS = secret_store_keys(
    envlist("THREADLESS_SECRET_STORE_KEYS", ""), VAR_DIR / "secret_store_key"
)
# Console sign-in throttle: failed attempts per account and per client IP, in the counter store.
THREADLESS_LOGIN_FAILURES_PER_ACCOUNT = envint("THREADLESS_LOGIN_FAILURES_PER_ACCOUNT", 5)
THREADLESS_LOGIN_FAILURES_PER_IP = envint("THREADLESS_LOGIN_FAILURES_PER_IP", 20)
THREADLESS_LOGIN_LOCKOUT_SECONDS = envint("THREADLESS_LOGIN_LOCKOUT_SECONDS", 900)

# Operations (docs/deployment.md, "Metrics, traces and logs"). Metrics are recorded by every
# process into files under THREADLESS_METRICS_DIR (prometheus-client's multi-process mode: web
# workers and Celery's prefork children each write their own, /metrics adds them up); /metrics
# answers only with `Authorization: Bearer <THREADLESS_METRICS_TOKEN>` and is a 404 while it is unset.
THREADLESS_METRICS = envbool("THREADLESS_METRICS", True)
THREADLESS_METRICS_TOKEN = envstr("THREADLESS_METRICS_TOKEN", "")
THREADLESS_METRICS_DIR = Path(envstr("THREADLESS_METRICS_DIR", str(VAR_DIR / "metrics"))).resolve()
if THREADLESS_METRICS:
    THREADLESS_METRICS_DIR.mkdir(parents=True, exist_ok=True)
    # prometheus-client picks its multi-process storage from this variable when it is first imported.
    # Set, not defaulted: a process started from another (a test's server) must not write to its parent's.
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(THREADLESS_METRICS_DIR)
else:
    os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
# OpenTelemetry traces (the `otel` extra): on when this is true, exported over OTLP to
# OTEL_EXPORTER_OTLP_ENDPOINT (read by the exporter itself, as are the other OTEL_* variables).
THREADLESS_TRACING = envbool("THREADLESS_TRACING", False)
# Log lines: "plain" (human-readable) or "json" (one object per line, with the request's id,
# project, route and duration); a line per request (logger threadless.request) when this is on.
THREADLESS_LOG_FORMAT = envstr("THREADLESS_LOG_FORMAT", "plain")
if THREADLESS_LOG_FORMAT not in ("plain", "json"):
    raise ImproperlyConfigured("THREADLESS_LOG_FORMAT: plain or json.")
THREADLESS_REQUEST_LOG = envbool("THREADLESS_REQUEST_LOG", THREADLESS_LOG_FORMAT == "json")
if THREADLESS_LOG_FORMAT == "json":
    logging.captureWarnings(True)  # a library's warning is a log line (py.warnings) like any other

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["projects.auth.ApiKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["projects.auth.IsProjectKey"],
    "DEFAULT_THROTTLE_CLASSES": ["projects.ratelimit.KeyRateThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["common.http.renderers.ORJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["common.http.parsers.ORJSONParser"],
    "EXCEPTION_HANDLER": "common.errors.api_exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Threadless API",
    "DESCRIPTION": "Memory for LLM agents. Every error has one shape: "
    '{"error": {"code", "message", "hint", "request_id", "retryable"}}.',
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/v1",
    "REDOC_DIST": "SIDECAR",
    # Enum names: a message's role (decorate/report messages, the history import), a search hit's
    # speaker and type, what a search includes.
    "ENUM_NAME_OVERRIDES": {
        "MessageRoleEnum": ["user", "assistant", "tool", "system"],
        "SpeakerRoleEnum": ["user", "assistant"],
        "SearchHitTypeEnum": ["message", "fact"],
        "SearchIncludeEnum": ["messages", "facts"],
    },
    # The conversation routes are plain async views (SSE): add them to the schema (chat.api.schema).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "chat.api.schema.conversation_paths",
    ],
}

# Celery: the embedded default is a folder of message files (no server): `threadless-fs://`,
# kombu's filesystem transport with atomic writes and a dead folder for unreadable files
# (common.broker); Redis in production.
_broker_url = envstr("CELERY_BROKER_URL", "threadless-fs://localhost")
# A folder transport ignores the host, but kombu warns on every start when the URL has none.
CELERY_BROKER_URL = (
    _broker_url + "localhost" if _broker_url in ("threadless-fs://", "filesystem://") else _broker_url
)
if CELERY_BROKER_URL.startswith(("threadless-fs://", "filesystem://")):
    _queue = VAR_DIR / "broker" / "queue"
    _processed = VAR_DIR / "broker" / "processed"
    _queue.mkdir(parents=True, exist_ok=True)
    _processed.mkdir(parents=True, exist_ok=True)
    (VAR_DIR / "broker" / "control").mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue),
        "data_folder_out": str(_queue),
        "processed_folder": str(_processed),
        "control_folder": str(VAR_DIR / "broker" / "control"),
        "dead_folder": str(VAR_DIR / "broker" / "dead"),
        "store_processed": False,
        "polling_interval": 0.1,
    }
elif CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
    # A publish while the broker is down must fail fast (the request answers and the outbox
    # sweep re-queues the row later) instead of retrying for seconds inside the request.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "max_retries": 1,
        "interval_start": 0,
        "interval_step": 0.2,
        "interval_max": 0.5,
    }
# One queue name per deployment sharing a broker (the test servers each get their own).
CELERY_TASK_DEFAULT_QUEUE = envstr("THREADLESS_CELERY_QUEUE", "celery")
CELERY_TASK_ALWAYS_EAGER = envbool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SOFT_TIME_LIMIT = 120
CELERY_TASK_TIME_LIMIT = 180
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_PUBLISH_RETRY = False
# The worker's heartbeat (common.heartbeat): written every HEARTBEAT seconds; /healthz/worker
# answers 503 when the newest is older than STALE (and /readyz says so in its body).
THREADLESS_WORKER_HEARTBEAT_SECONDS = envfloat("THREADLESS_WORKER_HEARTBEAT_SECONDS", 5)
THREADLESS_WORKER_STALE_SECONDS = envint("THREADLESS_WORKER_STALE_SECONDS", 60)
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE = {
    "outbox-sweep": {
        "task": "memories.tasks.outbox_sweep",
        "schedule": float(THREADLESS_OUTBOX_SWEEP_SECONDS),
    },
    "retention-sweep": {
        "task": "memories.tasks.retention_sweep",
        "schedule": float(THREADLESS_RETENTION_SWEEP_SECONDS),
    },
    "webhooks-sweep": {
        "task": "webhooks.tasks.sweep",
        "schedule": float(THREADLESS_WEBHOOK_SWEEP_SECONDS),
        "options": {"expires": float(THREADLESS_WEBHOOK_SWEEP_SECONDS) * 2},
    },
    "usage-flush": {
        "task": "projects.tasks.usage_flush",
        "schedule": float(THREADLESS_USAGE_FLUSH_SECONDS),
        "options": {"expires": float(THREADLESS_USAGE_FLUSH_SECONDS) * 2},
    },
}

# uvicorn's access log (`make run`): on unless THREADLESS_ACCESS_LOG=0
# (a formatted, redacted line per request costs about as much as the rate limit).
THREADLESS_ACCESS_LOG = envbool("THREADLESS_ACCESS_LOG", True)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Redaction first: the JSON line's message is the redacted one, as the plain line's is.
    "filters": {
        "redact": {"()": "common.redaction.RedactingFilter"},
        "one_line": {"()": "common.redaction.OneLineFilter"},
        "context": {"()": "common.logs.ContextFilter"},
    },
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "common.logformat.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": THREADLESS_LOG_FORMAT,
            "filters": ["redact", "context"],
        },
    },
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
    "loggers": {
        # One line per answered request (common.logs.request_done), when THREADLESS_REQUEST_LOG is on.
        "threadless.request": {"level": "INFO" if THREADLESS_REQUEST_LOG else "WARNING"},
        "django.request": {"handlers": ["console"], "level": "ERROR", "propagate": False},
        "django.db.backends": {"level": "WARNING"},
        # A bad Host header (400): one line, not Django's traceback per request.
        "django.security.DisallowedHost": {
            "handlers": ["console"],
            "level": "WARNING",
            "filters": ["one_line"],
            "propagate": False,
        },
        # uvicorn installs its own handlers (no filter) before the app loads; these replace them,
        # so the access log (`?key=…`, `client_token=…`) goes through the same redaction. No level
        # here: uvicorn's --log-level still decides what is written. No handler when it is off:
        # uvicorn then skips the line altogether (it checks `hasHandlers()`).
        "uvicorn.access": {"handlers": ["console"] if THREADLESS_ACCESS_LOG else [], "propagate": False},
        "uvicorn.error": {"handlers": ["console"], "propagate": False},
        # granian (`make serve`) sets its own handlers before the app loads; in its worker processes
        # these replace them (its access log, on with ACCESS_LOG=1, and what its workers report).
        "_granian": {"handlers": ["console"], "propagate": False},
        "granian.access": {"handlers": ["console"], "propagate": False},
    },
}
