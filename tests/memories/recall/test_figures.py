"""Recall's quality figures on a fixed subset, pinned to the third decimal: a change to recall that
moves any of them shows here, not only in `make bench-recall`. The subset: the first four
conversations of each half of the own corpus with providers `off` and (when installed) `local`;
with `off`, also the first conversation of each LoCoMo half when LoCoMo is beside the repository
(../shared/data/locomo). Run in a child process because tests and bench never import each other.

The full figures (`python -m bench.recall_bench --providers off,local`) are in docs/benchmarks.md;
these were measured with the same code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.fixtures.child_env import sqlite_env

ROOT = Path(__file__).resolve().parents[3]

CHILD = r"""
import json
from bench import recall_bench as rb

rb.setup_django()
from memories import embeddings
from projects.services import project_create

out = {"locomo": rb.DEFAULT_LOCOMO.exists()}
for provider in ("off", "local"):
    if provider == "local" and not embeddings.available_local():
        continue
    project = project_create(name=f"pinned-{provider}")
    project.model_config = {"embeddings": {"provider": provider}}
    project.save(update_fields=["model_config"])
    corpus = rb.run_corpus(project, ("dev", "heldout"), first=4)
    figures = {f"corpus {h}": [corpus[h]["search@3"], corpus[h]["decorate"]] for h in ("dev", "heldout")}
    if out["locomo"] and provider == "off":
        locomo = rb.run_locomo(rb.DEFAULT_LOCOMO, project, provider, ("tune", "heldout"), first=1)
        figures.update({f"locomo {h}": [locomo[h][k] for k in ("search@5", "search@10", "decorate@2000")]
                        for h in ("tune", "heldout")})
    out[provider] = figures
print(json.dumps(out))
"""

# own corpus: [right snippet in search top 3, answer in decorate]; LoCoMo: [search top 5, top 10,
# decorate@2000]
PINNED = {
    "off": {
        "corpus dev": [0.143, 0.357],
        "corpus heldout": [0.214, 0.5],
        "locomo tune": [0.7, 0.733, 0.833],
        "locomo heldout": [0.598, 0.704, 0.784],
    },
    "local": {"corpus dev": [0.857, 1.0], "corpus heldout": [0.643, 0.929]},
}


def test_the_recall_figures_on_the_pinned_subset_are_unchanged(tmp_path):
    env = sqlite_env(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
        check=True,
        env=env,
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for provider, figures in found.items():
        if provider == "locomo":
            continue
        expected = {
            k: v for k, v in PINNED[provider].items() if found["locomo"] or not k.startswith("locomo")
        }
        assert figures == expected, provider
