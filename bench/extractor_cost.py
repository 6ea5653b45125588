"""The offline fact extractor (memories/facts/rules/): quality per split and CPU cost, against
the rules of another commit in the same process.

    .venv/bin/python -m bench.extractor_cost --base main

Quality: precision and fact recall on each split of tests/data/recall_corpus.json's fact lines
(scored as tests/fixtures/background.py's `extractor_score`), on tests/data/background_heldout.json
and on each set of tests/data/extractor_own.json. Cost: CPU time (process_time) to extract from
1,000 fact lines, one message each; the base's and this tree's rules alternate, round by round, so
a busy machine slows both alike. Reads no other data file.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


def _load_rules(base: str | None):
    """This tree's rules, or those at git revision `base` (the package memories/facts/rules/, or the single
    module memories/facts/rules.py of older revisions), loaded under a name of their own."""
    if base is None:
        from memories.facts import rules

        return rules
    folder = Path(tempfile.mkdtemp())
    is_package = subprocess.run(["git", "cat-file", "-e", f"{base}:memories/facts/rules/__init__.py"], cwd=ROOT,
                                capture_output=True).returncode == 0
    if is_package:
        archive = subprocess.run(["git", "archive", base, "memories/facts/rules"], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        path = folder / "memories" / "facts" / "rules" / "__init__.py"
        spec = importlib.util.spec_from_file_location("rules_base", path, submodule_search_locations=[str(path.parent)])
    else:
        source = subprocess.run(["git", "show", f"{base}:memories/facts/rules.py"], cwd=ROOT, check=True,
                                capture_output=True, text=True).stdout
        path = folder / "rules_base.py"
        path.write_text(source)
        spec = importlib.util.spec_from_file_location("rules_base", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["rules_base"] = module  # the package's relative imports find it by this name
    spec.loader.exec_module(module)
    return module


def _score(extractor, lines) -> tuple[float, float, int]:
    from memories.facts.base import UserMessage

    tp = fp = fn = 0

    def ok(candidate, expected) -> bool:
        return candidate.slot == expected["slot"] and all(w in candidate.text.lower() for w in expected["must"])

    for i, (text, facts) in enumerate(lines):
        found = extractor.extract([UserMessage(entry_id=i + 1, seq=i + 1, text=text)])
        good = [c for c in found if any(ok(c, e) for e in facts)]
        tp, fp = tp + len(good), fp + len(found) - len(good)
        fn += sum(not any(ok(c, e) for c in found) for e in facts)
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1), tp + fn


def _sets() -> dict[str, list]:
    corpus = json.loads((DATA / "recall_corpus.json").read_text())
    sets = {}
    for split in ("dev", "heldout", "fresh", "fresh2"):
        sets[split] = [(x["text"], x["facts"]) for x in corpus["fact_lines"] if x["split"] == split]
    sets["background_heldout"] = [(x["text"], x["facts"])
                                  for x in json.loads((DATA / "background_heldout.json").read_text())["lines"]]
    for name, lines in json.loads((DATA / "extractor_own.json").read_text())["sets"].items():
        sets[f"own:{name}"] = [(x["text"], x["facts"]) for x in lines if x["facts"] is not None]
    return sets


def _cost(extractors, lines, rounds: int) -> list[list[float]]:
    from memories.facts.base import UserMessage

    messages = [[UserMessage(entry_id=1, seq=1, text=t)] for t in lines]
    times = [[] for _ in extractors]
    for _ in range(rounds):
        for i, extractor in enumerate(extractors):
            start = time.process_time()
            for message in messages:
                extractor.extract(message)
            times[i].append((time.process_time() - start) * 1000)
    return times


def main() -> None:
    import django

    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="main", help="git revision whose rules to compare with")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
    django.setup()
    base, head = _load_rules(args.base).RuleExtractor(), _load_rules(None).RuleExtractor()
    print(f"| set | facts | {args.base}: precision / recall | this tree: precision / recall |")
    print("|---|---|---|---|")
    for name, lines in _sets().items():
        bp, br, facts = _score(base, lines)
        hp, hr, _ = _score(head, lines)
        print(f"| {name} | {facts} | {bp:.3f} / {br:.3f} | {hp:.3f} / {hr:.3f} |")
    corpus = json.loads((DATA / "recall_corpus.json").read_text())
    lines = [x["text"] for x in corpus["fact_lines"]]
    lines = (lines * (1000 // len(lines) + 1))[:1000]
    base_ms, head_ms = _cost([base, head], lines, args.rounds)
    print(f"\nCPU ms per 1,000 lines ({args.rounds} alternating rounds): {args.base} median "
          f"{statistics.median(base_ms):.1f} (min {min(base_ms):.1f}, max {max(base_ms):.1f}), this tree median "
          f"{statistics.median(head_ms):.1f} (min {min(head_ms):.1f}, max {max(head_ms):.1f}), "
          f"ratio of medians {statistics.median(head_ms) / statistics.median(base_ms):.2f}")


if __name__ == "__main__":
    main()
