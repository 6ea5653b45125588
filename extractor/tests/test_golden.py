"""The rule extractor gives exactly what data/golden.json records on every labelled set:
the same precision and fact recall to the third decimal, the same right, wrong and missed counts per
slot, and the same facts line by line (by hash).
A change meant to alter behaviour rewrites that file with data/make_golden.py."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
PINNED = json.loads((DATA / "golden.json").read_text(encoding="utf-8"))["sets"]


def _generator():
    spec = importlib.util.spec_from_file_location("make_golden", DATA / "make_golden.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def measured() -> dict:
    return _generator().measure()[0]


def test_every_labelled_set_is_pinned(measured):
    assert sorted(measured) == sorted(PINNED)
    assert {"recall_corpus:dev", "recall_corpus:heldout", "background_heldout", "extractor_fresh11"} <= set(
        PINNED
    )


@pytest.mark.parametrize("name", sorted(PINNED))
def test_precision_and_recall_are_the_pinned_figures(measured, name):
    got, pinned = measured[name], PINNED[name]
    assert (got.get("precision"), got.get("fact_recall")) == (
        pinned.get("precision"),
        pinned.get("fact_recall"),
    )


@pytest.mark.parametrize("name", sorted(PINNED))
def test_right_wrong_and_missed_counts_per_slot_are_the_pinned_ones(measured, name):
    keys = ("facts", "right", "wrong", "not_found", "per_slot")
    assert {k: measured[name].get(k) for k in keys} == {k: PINNED[name].get(k) for k in keys}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_facts_of_each_line_are_the_pinned_ones(measured, name):
    got, pinned = measured[name], PINNED[name]
    assert (got["lines"], got["per_line_sha256"], got["together_sha256"]) == (
        pinned["lines"],
        pinned["per_line_sha256"],
        pinned["together_sha256"],
    )
