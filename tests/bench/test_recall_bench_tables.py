"""`bench.recall_bench --write-tables`: a final run's figures replace the section's tables, its prose
stays, and the per-category table is rewritten at the top of the recall tuning notes. Run in a child
process because tests and bench never import each other."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys
from pathlib import Path
from bench import recall_bench as rb

def locomo(x):
    cats = {n: {"search@5": x, "search@10": x, "decorate@2000": x, "questions": 7}
            for n in rb.CATEGORIES.values()}
    return {"questions": 28, "search@5": x, "search@10": x, "decorate@2000": x, "bm25@10": 0.5,
            "dense@10": None, "search_ms": 1.0, "decorate_ms": 2.0, "categories": cats}

def corpus(x):
    return {"conversations": 3, "questions": 9, "lines": 10, "facts": 8, "precision": 1.0, "fact_recall": 1.0,
            "search@3": x, "decorate": x}

def results(x):
    return {"off": {"locomo": {"tune": locomo(x), "heldout": locomo(x)},
                    "corpus": {"dev": corpus(x), "heldout": corpus(x)}}}

tmp = Path(sys.argv[1])
rb.DOC, rb.CHART = tmp / "benchmarks.md", tmp / "chart.png"
rb.CATEGORY_DOC = tmp / "recall.md"
rb.CATEGORY_DOC.write_text("# Recall tuning\n\n## An older finding\n\nolder prose\n")
old = rb.table(results(0.111))
rb.DOC.write_text("# Benchmarks\n\nbefore\n\n" + rb.START + "\n## 7.\n\nintro prose\n\n"
                  + "\n".join(old[:4]) + "\n\nmiddle prose\n\n" + "\n".join(old[5:])
                  + "\n\nclosing prose\n" + rb.END + "\n\nafter\n")
rb.write_tables(results(0.5))
rb.write_tables(results(0.987))
written = rb.DOC.read_text()
tuning = rb.CATEGORY_DOC.read_text()
bare = tmp / "bare.md"
bare.write_text("# Benchmarks\n")
rb.DOC = bare
try:
    rb.write_tables(results(0.5))
    refused = False
except SystemExit:
    refused = True
print(json.dumps({"text": written, "tuning": tuning, "refused": refused}))
"""


def test_write_tables_replaces_only_the_tables(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    text, tuning = result["text"], result["tuning"]
    assert "0.111" not in text and "0.987" in text
    for prose in ("before", "intro prose", "middle prose", "closing prose", "after"):
        assert prose in text
    for header in ("| provider | half | questions", "| provider | half | conversations"):
        assert text.count(header) == 1
    assert "| provider | half | multi-hop" not in text
    assert tuning.startswith("# Recall tuning\n\n<!-- recall-categories:start -->")
    assert tuning.count("| provider | half | multi-hop") == 1
    assert "0.99 / 0.99 / 0.99 (7)" in tuning and "0.50 / 0.50" not in tuning
    assert "## An older finding\n\nolder prose" in tuning
    assert result["refused"], "a document without the section is refused, not appended to"
