"""deploy/grafana-dashboard.json queries only metrics the service exposes (common.metrics and the
outbox gauges of /metrics), so no panel stays empty because of a misspelt name."""

from __future__ import annotations

import json
import re
from pathlib import Path

from prometheus_client import Counter, Histogram

from common import metrics

ROOT = Path(__file__).resolve().parents[2]
GAUGES = {"threadless_outbox_depth", "threadless_outbox_oldest_age_seconds"}


def exposed() -> set[str]:
    names = set(GAUGES)
    for value in vars(metrics).values():
        if isinstance(value, Counter):
            names.add(value._name + "_total")
        elif isinstance(value, Histogram):
            names |= {value._name + suffix for suffix in ("_bucket", "_sum", "_count")}
    return names


def test_every_dashboard_query_names_an_exposed_metric():
    dashboard = json.loads((ROOT / "deploy" / "grafana-dashboard.json").read_text())
    queried = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"threadless_[a-z_]+", target["expr"])
    }
    assert queried and queried <= exposed(), queried - exposed()
    assert {
        "threadless_outbox_depth",
        "threadless_outbox_oldest_age_seconds",
        "threadless_decorate_degraded_total",
    } <= queried
