"""The rule extractor on a file of labelled user lines: precision, fact recall, per slot.

    .venv/bin/python extractor/bench/eval.py PATH [--split NAME] [--show-misses]

PATH is a JSON file holding the lines as a list, under "lines" (extractor/tests/data/extractor_fresh3.json)
or under "fact_lines" (tests/data/recall_corpus.json, where --split picks dev, heldout, fresh, ...).
Each line is {"text": ..., "facts": [{"slot": ..., "must": [...]}]}. The scoring rule is
`factrules.score.score`, the same function the tests use.
--show-misses also prints every label not found and every candidate no label asked for: don't use
it on a set that is meant to stay unseen.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from factrules.score import score


def load_lines(path: Path, split: str | None = None) -> list[dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    lines = data if isinstance(data, list) else data.get("lines", data.get("fact_lines"))
    if not isinstance(lines, list):
        raise SystemExit(f"{path}: no list of lines (a JSON list, or one under 'lines' or 'fact_lines')")
    if split is not None:
        lines = [x for x in lines if x.get("split") == split]
    return lines


def report(result: dict, show_misses: bool = False) -> list[str]:
    out = [
        f"lines {result['lines']}  facts {result['facts']}  right {result['tp']}  wrong {result['fp']}  "
        f"not found {result['fn']}",
        f"precision {result['precision']:.3f}  fact recall {result['fact_recall']:.3f}",
        "",
        f"{'slot':<12} {'facts':>6} {'found':>6} {'wrong':>6}",
    ]
    for kind, r in result["per_slot"].items():
        out.append(f"{kind:<12} {r['facts']:>6} {r['found']:>6} {r['wrong']:>6}")
    if show_misses:
        out += ["", "not found:"]
        out += [
            f"  [{m['line']}] {m['slot']} {m['must']} <- {m['text']!r}  got {m['got']}"
            for m in result["misses"]
        ]
        out += ["", "said but not labelled:"]
        out += [f"  [{w['line']}] {w['slot']}: {w['said']!r} <- {w['text']!r}" for w in result["wrong"]]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="extractor/bench/eval.py", description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--split", help="only the lines whose 'split' is this (recall_corpus.json)")
    parser.add_argument("--show-misses", action="store_true", help="print what was missed and what was wrong")
    args = parser.parse_args(argv)
    lines = load_lines(args.path, args.split)
    print("\n".join(report(score(lines), args.show_misses)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
