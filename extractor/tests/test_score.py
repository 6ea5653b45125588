"""The one scoring rule for fact extractors (factrules.score), and the command that prints it
(`bench/eval.py`), on tiny inline sets whose right answer is worked out by hand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from factrules import Candidate
from factrules.score import score

EVAL = Path(__file__).resolve().parents[1] / "bench" / "eval.py"

LINES = [
    {"text": "a", "facts": [{"slot": "name", "must": ["ana"]}, {"slot": "location", "must": ["oslo"]}]},
    {"text": "b", "facts": []},
    {"text": "c", "facts": [{"slot": "pet:rex", "must": ["rex"]}]},
    {"text": "d", "facts": [{"slot": "job", "must": ["nurse"]}]},
]
SAYS = {
    "a": [Candidate(text="Name is Ana", slot="name"), Candidate(text="Lives in Bergen", slot="location")],
    "b": [Candidate(text="Likes tea", slot="preference:tea")],
    "c": [Candidate(text="Dog Rex", slot="pet:rex"), Candidate(text="Has a dog called REX", slot="pet:rex")],
    "d": [Candidate(text="Works as a nurse", slot="employer")],
}


class Scripted:
    """An extractor that says what SAYS lists for a line's text, and remembers what it was given."""

    made: list[Scripted] = []

    def __init__(self) -> None:
        self.given: list = []
        Scripted.made.append(self)

    def extract(self, messages):
        self.given.append(messages)
        return list(SAYS[messages[0].text])


def test_score_counts_right_wrong_and_missed_facts_by_hand():
    Scripted.made = []
    r = score(LINES, extractor=Scripted)
    # 4 labels. right: Ana, Rex twice; wrong: Bergen (words), tea (no label), nurse (slot); missed:
    # Oslo, nurse. Recall is right / (right + missed) = 3/5, as the tests always counted it (a label
    # said twice counts twice), not labels found / labels = 2/4.
    assert (r["lines"], r["facts"], r["tp"], r["fp"], r["fn"]) == (4, 4, 3, 3, 2)
    assert r["precision"] == 0.5 and r["fact_recall"] == 0.6
    assert r["per_slot"] == {
        "employer": {"facts": 0, "found": 0, "wrong": 1},
        "job": {"facts": 1, "found": 0, "wrong": 0},
        "location": {"facts": 1, "found": 0, "wrong": 1},
        "name": {"facts": 1, "found": 1, "wrong": 0},
        "pet": {"facts": 1, "found": 1, "wrong": 0},
        "preference": {"facts": 0, "found": 0, "wrong": 1},
    }
    assert [(m["line"], m["slot"]) for m in r["misses"]] == [(0, "location"), (3, "job")]
    assert [(w["line"], w["said"]) for w in r["wrong"]] == [
        (0, "Lives in Bergen"),
        (1, "Likes tea"),
        (3, "Works as a nurse"),
    ]


def test_score_gives_each_line_alone_to_a_fresh_extractor():
    Scripted.made = []
    score(LINES, extractor=Scripted)
    assert len(Scripted.made) == len(LINES)
    given = [x.given for x in Scripted.made]
    assert all(len(calls) == 1 and len(calls[0]) == 1 for calls in given)
    assert [(calls[0][0].text, calls[0][0].seq, calls[0][0].entry_id) for calls in given] == [
        ("a", 1, 1),
        ("b", 2, 2),
        ("c", 3, 3),
        ("d", 4, 4),
    ]


def test_must_words_are_matched_in_lower_case_and_all_of_them():
    line = {"text": "x", "facts": [{"slot": "preference:jazz", "must": ["likes", "jazz"]}]}
    SAYS["x"] = [Candidate(text="Enjoys JAZZ", slot="preference:jazz")]
    try:
        assert score([line], extractor=Scripted)["fn"] == 1
        SAYS["x"] = [Candidate(text="Likes JAZZ", slot="preference:jazz")]
        assert score([line], extractor=Scripted)["fact_recall"] == 1.0
    finally:
        del SAYS["x"]


def test_no_candidates_and_no_labels_scores_zero_not_an_error():
    r = score([], extractor=Scripted)
    assert (r["lines"], r["precision"], r["fact_recall"], r["per_slot"]) == (0, 0.0, 0.0, {})


def _run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EVAL), *args],
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_command_prints_precision_recall_and_per_slot_and_misses_only_when_asked(tmp_path):
    # A label no extractor can meet (the word is not in the text) and a line that is only small talk.
    path = tmp_path / "lines.json"
    path.write_text(
        json.dumps(
            {
                "about": "test",
                "lines": [
                    {"text": "hello there", "facts": [{"slot": "name", "must": ["qqqzzz"]}]},
                    {"text": "ok thanks", "facts": []},
                ],
            }
        ),
        encoding="utf-8",
    )
    out = _run(str(path))
    assert "lines 2  facts 1  right 0" in out and "not found 1" in out
    assert "fact recall 0.000" in out
    assert any(row.split()[:3] == ["name", "1", "0"] for row in out.splitlines())
    assert "qqqzzz" not in out and "not found:" not in out
    shown = _run(str(path), "--show-misses")
    assert "not found:" in shown and "qqqzzz" in shown and "hello there" in shown


def test_the_command_reads_one_split_of_fact_lines(tmp_path):
    path = tmp_path / "corpus.json"
    path.write_text(
        json.dumps(
            {
                "fact_lines": [
                    {"split": "dev", "text": "hello", "facts": [{"slot": "name", "must": ["qqqzzz"]}]},
                    {"split": "heldout", "text": "hi", "facts": []},
                    {"split": "heldout", "text": "hey", "facts": []},
                ]
            }
        ),
        encoding="utf-8",
    )
    assert "lines 2  facts 0" in _run(str(path), "--split", "heldout")
    assert "lines 1  facts 1" in _run(str(path), "--split", "dev")
