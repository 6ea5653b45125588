"""Write extractor/tests/data/golden.json: the rule extractor's precision and fact recall on every
labelled set with the counts behind them per slot, and a hash of the exact facts it gives for each line,
so a change that should not change behaviour (a refactor, a faster pattern) is checked against what
the extractor did before.

    .venv/bin/python extractor/tests/data/make_golden.py            # write the file
    .venv/bin/python extractor/tests/data/make_golden.py --check    # compare with it instead
    .venv/bin/python extractor/tests/data/make_golden.py --facts F  # also write every fact to F (for diffing)

Each line is given to the extractor alone, as one committed user message (as factrules.score scores
it); each set is also given to one extractor as one list of messages, which is hashed too.
The hashes cover the slot, text, confidence, source entry ids and seq of every candidate, in order.
Run it only when behaviour is meant to change, and say why in the commit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent
# The service's generated corpora (its recall tests and bench use them too) hold labelled lines as well.
SERVICE_DATA = DATA.parents[2] / "tests" / "data"
GOLDEN = DATA / "golden.json"


def extractor_sets() -> dict[str, list[dict]]:
    """Every set of labelled user lines, by name; a line's "facts" is None when it is not scored."""
    sets: dict[str, list[dict]] = {}
    corpus = json.loads((SERVICE_DATA / "recall_corpus.json").read_text(encoding="utf-8"))
    for split in sorted({x["split"] for x in corpus["fact_lines"]}):
        sets[f"recall_corpus:{split}"] = [x for x in corpus["fact_lines"] if x["split"] == split]
    sets["background_heldout"] = json.loads((DATA / "background_heldout.json").read_text(encoding="utf-8"))[
        "lines"
    ]
    for name, lines in json.loads((DATA / "extractor_own.json").read_text(encoding="utf-8"))["sets"].items():
        sets[f"extractor_own:{name}"] = lines
    for path in sorted(
        DATA.glob("extractor_fresh*.json"), key=lambda p: int(p.stem.removeprefix("extractor_fresh"))
    ):
        sets[path.stem] = json.loads(path.read_text(encoding="utf-8"))["lines"]
    background = json.loads((SERVICE_DATA / "background_corpus.json").read_text(encoding="utf-8"))
    sets["background_corpus:user_turns"] = [
        {"text": user, "facts": None}
        for conversation in background["conversations"]
        for user, _ in conversation["turns"]
    ]
    return sets


def _rows(candidates) -> list[list]:
    return [[c.slot, c.text, c.confidence, list(c.source_entry_ids), c.source_seq] for c in candidates]


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def measure(sets: dict[str, list[dict]] | None = None) -> tuple[dict, dict]:
    """({set: {lines, facts, precision, fact_recall, right, wrong, not_found, per_slot, per_line_sha256,
    together_sha256}}, {set: facts per line})."""
    from factrules import UserMessage, extract
    from factrules.score import score

    figures, facts = {}, {}
    for name, lines in (sets or extractor_sets()).items():
        messages = [UserMessage(entry_id=i + 1, seq=i + 1, text=x["text"]) for i, x in enumerate(lines)]
        per_line = [_rows(extract([m])) for m in messages]
        together = _rows(extract(messages))
        entry = {
            "lines": len(lines),
            "per_line_sha256": _digest(per_line),
            "together_sha256": _digest(together),
        }
        labelled = [x for x in lines if x["facts"] is not None]
        if labelled:
            result = score(labelled)
            entry.update(
                facts=result["facts"],
                precision=round(result["precision"], 3),
                fact_recall=round(result["fact_recall"], 3),
                right=result["tp"],
                wrong=result["fp"],
                not_found=result["fn"],
                per_slot=result["per_slot"],
            )
        figures[name] = entry
        facts[name] = {"per_line": per_line, "together": together}
    return figures, facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=Path, help="also write every extracted fact to this file")
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    args = parser.parse_args(argv)
    figures, facts = measure()
    if args.facts:
        args.facts.write_text(json.dumps(facts, ensure_ascii=False, indent=1), encoding="utf-8")
    if args.check:
        pinned = json.loads(GOLDEN.read_text(encoding="utf-8"))["sets"]
        changed = [name for name in pinned.keys() | figures.keys() if pinned.get(name) != figures.get(name)]
        print("\n".join(f"changed: {name}" for name in sorted(changed)) or "unchanged")
        return 1 if changed else 0
    GOLDEN.write_text(
        json.dumps(
            {
                "about": "What the rule extractor gives on every labelled set: precision and fact recall "
                "(third decimal), the counts behind them per slot, and a sha256 of its exact facts per line "
                "and for the set as one list of "
                "messages. Written by extractor/tests/data/make_golden.py; "
                "extractor/tests/test_golden.py pins it.",
                "sets": figures,
            },
            ensure_ascii=False,
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
