"""How a fact extractor is scored on labelled user lines: the one implementation behind the package's
bench (`bench/eval.py`), its golden figures, and the service's tests of other extractors.

A line is `{"text": "...", "facts": [{"slot": "...", "must": ["lowercase", "words"]}]}`; each
line is given to a fresh extractor alone, as one committed user message. A candidate is right when
its slot equals a label's slot and its text, lower-cased, holds every "must" word of that label.
Precision = right candidates / all candidates; fact recall = right candidates / (right candidates
+ labels no candidate got), as the tests have always counted it (equal to labels found / labels
unless one label is matched by two candidates).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .candidate import Candidate, UserMessage
from .pipeline import extract


def fact_matches(candidate, expected: dict) -> bool:
    """One candidate against one label: same slot, and every must-word in its text."""
    return candidate.slot == expected["slot"] and all(w in candidate.text.lower() for w in expected["must"])


def slot_kind(slot: str) -> str:
    """What a slot is about, for per-slot counts: "pet:biscuit" -> "pet", "" -> "(none)"."""
    return slot.split(":", 1)[0] or "(none)"


class _Rules:
    """The rules as an extractor object: what `score` makes for each line by default."""

    @staticmethod
    def extract(messages: list[UserMessage]) -> list[Candidate]:
        return extract(messages)


def score(lines: Iterable[dict], extractor: Callable[[], object] | None = None) -> dict:
    """Precision, fact recall and per-slot counts of an extractor on labelled lines.

    `extractor` makes a fresh extractor per line (default: the rule extractor). The result holds
    `lines`, `facts`, `tp` (right candidates), `fp` (wrong ones), `fn` (labels not found),
    `precision`, `fact_recall` (unrounded), `per_slot` ({kind: {"facts", "found", "wrong"}}) and
    `misses` / `wrong` (what was not found, what should not have been said) for --show-misses."""
    make = extractor or _Rules
    n = labels = tp = fp = fn = 0
    per_slot: dict[str, dict[str, int]] = {}
    misses: list[dict] = []
    wrong: list[dict] = []

    def row(kind: str) -> dict[str, int]:
        return per_slot.setdefault(kind, {"facts": 0, "found": 0, "wrong": 0})

    for i, line in enumerate(lines):
        n += 1
        found = make().extract([UserMessage(entry_id=i + 1, seq=i + 1, text=line["text"])])
        for c in found:
            if any(fact_matches(c, e) for e in line["facts"]):
                tp += 1
            else:
                fp += 1
                row(slot_kind(c.slot))["wrong"] += 1
                wrong.append({"line": i, "text": line["text"], "slot": c.slot, "said": c.text})
        for e in line["facts"]:
            labels += 1
            r = row(slot_kind(e["slot"]))
            r["facts"] += 1
            if any(fact_matches(c, e) for c in found):
                r["found"] += 1
            else:
                fn += 1
                misses.append(
                    {
                        "line": i,
                        "text": line["text"],
                        "slot": e["slot"],
                        "must": e["must"],
                        "got": [(c.slot, c.text) for c in found],
                    }
                )
    return {
        "lines": n,
        "facts": labels,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": tp / max(tp + fp, 1),
        "fact_recall": tp / max(tp + fn, 1),
        "per_slot": dict(sorted(per_slot.items())),
        "misses": misses,
        "wrong": wrong,
    }
