"""Redaction time against input size: the evidence that every pattern in common/redaction.py
runs in linear time.

Adversarial inputs (the shapes that made the old patterns quadratic) from 1 KB to 1 MiB go
through the patterns *without* the input cut (`redact_secrets(text, None)`, `clean_reason(text,
None)`, `redact_urls`), so the table shows the patterns' own growth: linear means the time per KB
stays flat. A second table times the entry points as the server calls them (`digest_text`,
`raw_error_text`, with their cut), which stay flat in absolute terms.

    python -m bench.redaction_bench [--sizes 1,4,16,64,256,1024] [--doc docs/benchmarks.md]

Run alone it rewrites its own section of docs/benchmarks.md; `make bench` includes it too.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from bench.common import DOCS, ROOT
from bench.django_setup import SETTINGS

TITLE = "## 5. Redaction time vs input size"
SIZES_KB = (1, 4, 16, 64, 256, 1024)
TARGET_FLAT = 2.0  # per-KB time at the largest size within 2× of the smallest size ≥ 16 KB
INPUTS = {
    "`a-a-a-…`": "a-",
    "`a.a.a.…`": "a.",
    "`eyJ-eyJ-…`": "eyJ-",
    "spaces": " ",
    'nested `{"a":`': '{"a":',
    "`http://` repeated": "http://",
    "`<<<…`": "<",
    "`at a(` frames": "at a(",
    "`token token …`": "token ",
    "`a://b@` userinfo": "a://b@",
    "prose with keys": "the call to api.example.com/v1?key=AIzaSyA1234567890abcdefghijklmnopqrs failed; ",
}


def _setup() -> None:
    """common.redaction needs neither Django's settings nor a database: the module is only named."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", SETTINGS)


def _cpu_ms(fn, text: str, reps: int) -> float:
    """The median CPU time of `reps` calls (thread CPU: the wait for a core on a shared machine is
    left out)."""
    samples = []
    for _ in range(reps):
        start = time.thread_time()
        fn(text)
        samples.append((time.thread_time() - start) * 1000)
    samples.sort()
    return samples[len(samples) // 2]


def run(sizes_kb=SIZES_KB) -> dict:
    _setup()
    from common.redaction import clean_reason, digest_text, raw_error_text, redact_secrets, redact_urls

    def patterns(text: str) -> None:  # every pattern, no cut in front
        redact_secrets(text, None)
        clean_reason(text, None)
        redact_urls(text)

    def served(text: str) -> None:  # what a failure costs the server (digest + raw error)
        digest_text("t", text)
        raw_error_text(text)

    results: dict = {"sizes_kb": list(sizes_kb), "patterns": {}, "served": {}}
    for name, unit in INPUTS.items():
        results["patterns"][name] = {}
        results["served"][name] = {}
        for kb in sizes_kb:
            size = kb * 1024
            text = (unit * (size // len(unit) + 1))[:size]
            reps = 7 if kb <= 64 else 3
            results["patterns"][name][kb] = _cpu_ms(patterns, text, reps)
            results["served"][name][kb] = _cpu_ms(served, text, reps)
    return results


def _ms(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def markdown(results: dict) -> str:
    sizes = results["sizes_kb"]
    label = {kb: (f"{kb // 1024} MiB" if kb >= 1024 else f"{kb} KB") for kb in sizes}
    lines = [
        TITLE,
        "",
        "Every pattern of `common/redaction.py` on adversarial input, **without** the input cut "
        "(`redact_secrets(text, None)` + `clean_reason(text, None)` + `redact_urls(text)`), by "
        "`bench/redaction_bench.py`. Cells are CPU µs per KB of input (median); linear time "
        "means a flat row. *Flat* compares the per-KB time at the largest size with the smallest "
        f"size from 16 KB up (below that a call's fixed cost dominates); target ≤ {TARGET_FLAT}×.",
        "",
        "| input | "
        + " | ".join(label[kb] for kb in sizes)
        + " | total at "
        + label[sizes[-1]]
        + " | flat |",
        "|---|" + "---:|" * (len(sizes) + 2),
    ]
    misses = []
    for name, row in results["patterns"].items():
        per_kb = {kb: row[kb] / kb for kb in sizes}
        base_kb = next((kb for kb in sizes if kb >= 16), sizes[0])
        flat = per_kb[sizes[-1]] / per_kb[base_kb] if per_kb[base_kb] else 1.0
        ok = flat <= TARGET_FLAT
        if not ok:
            misses.append(name)
        lines.append(
            f"| {name} | "
            + " | ".join(f"{per_kb[kb] * 1000:,.1f} µs" for kb in sizes)
            + f" | {_ms(row[sizes[-1]])} ms | {flat:.2f}× {'✅' if ok else '❌'} |"
        )
    lines += [
        "",
        "As the server calls it (`digest_text` + `raw_error_text`, input cut to 4 KB / 8 KB before any "
        "pattern runs): CPU ms per call, flat in the input size.",
        "",
        "| input | " + " | ".join(label[kb] for kb in sizes) + " |",
        "|---|" + "---:|" * len(sizes),
    ]
    for name, row in results["served"].items():
        lines.append(f"| {name} | " + " | ".join(_ms(row[kb]) for kb in sizes) + " |")
    lines += ["", "Patterns not flat in this run: " + (", ".join(misses) if misses else "none") + "."]
    return "\n".join(lines)


def write_section(doc: Path, section: str) -> None:
    """Replace this section of the doc (or add it before the list of missed targets)."""
    text = doc.read_text() if doc.exists() else "# Benchmarks\n"
    lines = text.splitlines()
    if TITLE in lines:
        start = lines.index(TITLE)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        lines[start:end] = section.splitlines() + [""]
    else:
        at = next((i for i, line in enumerate(lines) if line.startswith("## Targets missed")), len(lines))
        lines[at:at] = section.splitlines() + [""]
    doc.write_text("\n".join(lines).rstrip() + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES_KB), help="KB")
    parser.add_argument("--doc", default=str(DOCS / "benchmarks.md"))
    args = parser.parse_args()
    section = markdown(run([int(s) for s in args.sizes.split(",")]))
    print(section)
    write_section(Path(args.doc), section)


if __name__ == "__main__":
    main()
