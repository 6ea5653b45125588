"""`bench.recall_bench --write-tables`: a final run's figures replace the section's tables, its prose stays."""

from __future__ import annotations

import pytest

from bench import recall_bench as rb


def _locomo(x: float) -> dict:
    cats = {name: {"search@5": x, "search@10": x, "decorate@2000": x, "questions": 7} for name in rb.CATEGORIES.values()}
    return {"questions": 28, "search@5": x, "search@10": x, "decorate@2000": x, "bm25@10": 0.5, "dense@10": None,
            "search_ms": 1.0, "decorate_ms": 2.0, "categories": cats}


def _corpus(x: float) -> dict:
    return {"conversations": 3, "questions": 9, "lines": 10, "facts": 8, "precision": 1.0, "fact_recall": 1.0,
            "search@3": x, "decorate": x}


def _results(x: float) -> dict:
    return {"off": {"locomo": {"tune": _locomo(x), "heldout": _locomo(x)},
                    "corpus": {"dev": _corpus(x), "heldout": _corpus(x)}}}


def test_write_tables_replaces_only_the_tables(tmp_path, monkeypatch):
    doc = tmp_path / "benchmarks.md"
    monkeypatch.setattr(rb, "DOC", doc)
    monkeypatch.setattr(rb, "CHART", tmp_path / "chart.png")
    old = rb.table(_results(0.111))
    doc.write_text("# Benchmarks\n\nbefore\n\n" + rb.START + "\n## 7.\n\nintro prose\n\n" + "\n".join(old[:6])
                   + "\n\nmiddle prose\n\n" + "\n".join(old[6:]) + "\n\nclosing prose\n" + rb.END + "\n\nafter\n")
    rb.write_tables(_results(0.987))
    text = doc.read_text()
    assert "0.111" not in text and "0.99" in text and "0.987" in text
    for prose in ("before", "intro prose", "middle prose", "closing prose", "after"):
        assert prose in text
    assert text.count("| provider | half | questions") == 1
    assert text.count("| provider | half | conversations") == 1


def test_write_tables_needs_the_section(tmp_path, monkeypatch):
    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n")
    monkeypatch.setattr(rb, "DOC", doc)
    with pytest.raises(SystemExit):
        rb.write_tables(_results(0.5))
