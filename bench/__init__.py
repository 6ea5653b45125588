"""Benchmarks and reliability runs. Everything here talks to 127.0.0.1 only and every loop is bounded.

The suites the Makefile runs, each writing its section of docs/benchmarks.md (or docs/reliability.md):

* `make bench` → `bench.run`: decorate and report against a raw-SQL lower bound (`measure`,
  `lowerbound`, `peer`), the SDK (`sdk_bench`), the pipeline (`pipeline_bench`,
  `pipeline_overhead`), redaction (`redaction_bench`), the proxy (`proxy_bench`), semantic
  recall's cost (`recall_cost`), metrics (`metrics_cost`).
* `make bench-recall` → `bench.recall_bench` (LoCoMo and the own corpus; `extractor_eval`).
* `make bench-load`, `make bench-servers` → `bench.load` (a package: stacks, client, statistics,
  report; against the bare ASGI floor, `floor`).
* `make reliability` → `bench.reliability` (`embedded_faults`, `faultkit`, `locustfile`, `soak_tasks`).

Shared: `common` (the synthetic conversation, timing, the machine; no Django), `django_setup` (the
one place a benchmark process sets Django up), `memory_builder` (a memory of any size, in bulk).
"""
