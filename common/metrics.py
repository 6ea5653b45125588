"""Prometheus metrics of the service: one definition of each, and one small recording function per
event, so call sites never touch the client library.

Multi-process: settings set PROMETHEUS_MULTIPROC_DIR (THREADLESS_METRICS_DIR) before this module
imports prometheus-client, so every process (each web worker, each Celery prefork child) writes
its own files there and `exposition()` adds them up. Labels are bounded sets only: a route's
pattern (never its path), a status code, an operation, a task or job kind, an error type, a
provider, an outcome. Never a memory id, a key, or anything a user wrote.

With THREADLESS_METRICS off, every recording function returns at once (the bench's "without").
"""

from __future__ import annotations

from django.conf import settings

ON = bool(settings.THREADLESS_METRICS)  # read before the client is imported: it sets the storage mode

from prometheus_client import (  # noqa: E402 - after settings chose the multi-process directory
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily  # noqa: E402

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
COUNT_BUCKETS = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
JOB_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180)

REQUESTS = Counter(
    "threadless_http_requests",
    "HTTP requests answered, by route pattern, method and status.",
    ["route", "method", "status"],
)
REQUEST_SECONDS = Histogram(
    "threadless_http_request_duration_seconds",
    "Time to answer (to the first byte of a stream), by route pattern and method.",
    ["route", "method"],
    buckets=LATENCY_BUCKETS,
)
DECORATES = Counter("threadless_decorate", "decorate answers built (API and proxy).", [])
DECORATE_WINDOW = Histogram(
    "threadless_decorate_window_messages", "History messages in a decorate's window.", buckets=COUNT_BUCKETS
)
DECORATE_RECALLED = Histogram(
    "threadless_decorate_recalled_snippets",
    "Recalled snippets in a decorate's answer.",
    buckets=COUNT_BUCKETS,
)
DECORATE_FACTS = Histogram(
    "threadless_decorate_facts", "Facts in a decorate's answer.", buckets=COUNT_BUCKETS
)
DECORATE_DEGRADED = Counter(
    "threadless_decorate_degraded",
    "Calls answered without memory because decorate could not run, by where.",
    ["source"],
)
REPORTS = Counter(
    "threadless_report", "report calls, accepted (202) or rejected (an error answer).", ["outcome"]
)
REPORT_MESSAGES = Counter("threadless_report_messages", "Messages stored by accepted reports.", [])
JOBS = Counter(
    "threadless_jobs", "Background jobs run, by kind (the task's name) and outcome.", ["kind", "outcome"]
)
JOB_SECONDS = Histogram(
    "threadless_job_duration_seconds", "Background job run time, by kind.", ["kind"], buckets=JOB_BUCKETS
)
FACTS = Counter(
    "threadless_facts_extracted",
    "Fact extraction results, by extractor and outcome.",
    ["extractor", "outcome"],
)
DIGESTS = Counter(
    "threadless_error_digests",
    "Error digests written, by task type and error type.",
    ["task_type", "error_type"],
)
PROXY_CALLS = Counter(
    "threadless_proxy_calls",
    "Proxied model calls, by provider and upstream status.",
    ["provider", "upstream_status"],
)
PROXY_ADDED = Histogram(
    "threadless_proxy_added_latency_seconds",
    "Time the proxy adds before the upstream call (key, decorate), by provider.",
    ["provider"],
    buckets=LATENCY_BUCKETS,
)
REFUSALS = Counter("threadless_refusals", "Requests refused by a rate limit or a plan allowance.", ["code"])

REFUSAL_CODES = frozenset({"rate_limited", "quota_exceeded"})
# A request's method is any token a client sends: anything else is counted as "other".
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def request(route: str, method: str, status: int, seconds: float) -> None:
    if ON:
        method = method if method in METHODS else "other"
        REQUESTS.labels(route, method, str(status)).inc()
        REQUEST_SECONDS.labels(route, method).observe(seconds)


def decorate(*, window: int, recalled: int, facts: int) -> None:
    if ON:
        DECORATES.inc()
        DECORATE_WINDOW.observe(window)
        DECORATE_RECALLED.observe(recalled)
        DECORATE_FACTS.observe(facts)


def decorate_degraded(source: str) -> None:
    if ON:
        DECORATE_DEGRADED.labels(source).inc()


def report(*, accepted: bool, messages: int = 0) -> None:
    if ON:
        REPORTS.labels("accepted" if accepted else "rejected").inc()
        if messages:
            REPORT_MESSAGES.inc(messages)


def job(kind: str, outcome: str, seconds: float) -> None:
    if ON:
        JOBS.labels(kind, outcome).inc()
        JOB_SECONDS.labels(kind).observe(seconds)


def facts(extractor: str, counts: dict) -> None:
    if ON:
        for outcome in ("created", "merged", "superseded", "skipped"):
            if counts.get(outcome):
                FACTS.labels(extractor, outcome).inc(counts[outcome])


def digest(task_type: str, error_type: str) -> None:
    if ON:
        DIGESTS.labels(task_type or "reported", error_type or "unknown").inc()


def proxy_call(provider: str, upstream_status: int | str, added_seconds: float | None) -> None:
    if ON:
        PROXY_CALLS.labels(provider, str(upstream_status)).inc()
        if added_seconds is not None:
            PROXY_ADDED.labels(provider).observe(added_seconds)


def refusal(code: str) -> None:
    if ON and code in REFUSAL_CODES:
        REFUSALS.labels(code).inc()


class _Gauges:
    """Figures read at scrape time (the outbox from the database), from a callable the caller passes."""

    def __init__(self, read) -> None:
        self.read = read

    def collect(self):
        for name, help_text, value in self.read():
            family = GaugeMetricFamily(name, help_text)
            family.add_metric([], value)
            yield family


def exposition(gauges=None) -> tuple[bytes, str]:
    """The text exposition of every process's metrics (plus `gauges()`: (name, help, value) rows
    read now), and its content type."""
    registry = CollectorRegistry()
    if ON:
        multiprocess.MultiProcessCollector(registry)
    if gauges is not None:
        registry.register(_Gauges(gauges))
    return generate_latest(registry), CONTENT_TYPE_LATEST


def counter_total(counter: Counter, **labels: str) -> float:
    """The sum over every process of one counter (optionally one label set), for the console's
    Overview: read from the same files /metrics reads."""
    if not ON:
        return 0.0
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    wanted = counter._name + "_total"
    total = 0.0
    for family in registry.collect():
        for sample in family.samples:
            if sample.name == wanted and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total
