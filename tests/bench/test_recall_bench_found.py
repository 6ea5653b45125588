"""`bench.recall_bench`'s decorate measure counts a recalled turn only when decorate shows it whole: a
window cut out of a long message may leave out what the question needs; and it reads the date the
recall block shows it under. Run in a child process
because tests and bench never import each other."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from tests.fixtures.child_env import sqlite_env

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys
from datetime import datetime
from bench import recall_bench as rb

rb.setup_django()
from memories import context
from projects.services import project_create

turns = json.loads(sys.argv[1])
for t in turns:
    t["date"] = datetime.fromisoformat(t["date"])
memory, by_dia, contents = rb.ingest(project_create(name="found"), turns, "found")
question = "Which pier does the ferry to Hvar leave from?"
wanted = [by_dia["long"]]
found = {}
for whole in (1000, 0):  # shown whole / as recall's 240-character window
    params = context.ContextParameters(recall_whole_chars=whole)
    ctx = context.context_build(memory=memory, new_messages=[{"role": "user", "content": question}],
                                budget_tokens=rb.DECORATE_BUDGET, params=params)
    shown, dated = rb._decorate_found(memory, question, wanted, contents, params)
    found[whole] = {"recalled": by_dia["long"] in {h["entry_id"] for h in ctx.recalled},
                    "found": shown, "day": dated.get(by_dia["long"])}
print(json.dumps(found))
"""


def test_a_recalled_turn_counts_only_when_shown_whole(tmp_path):
    day = datetime(2023, 5, 8, tzinfo=UTC).isoformat()
    long = (
        "Ana: The ferry to Hvar leaves from pier 7 in Split. "
        + "We talked about the islands and the harbour. " * 10
        + "The booking code is HV-2291."
    )
    turns = [{"dia_id": "long", "role": "user", "content": long, "date": day}]
    turns += [
        {
            "dia_id": f"f{i}",
            "role": "assistant" if i % 2 else "user",
            "content": f"{'Bo' if i % 2 else 'Ana'}: lunch plan {i}, soup and bread by the riva.",
            "date": day,
        }
        for i in range(300)
    ]
    env = sqlite_env(tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(turns)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env=env,
    )
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["1000"] == {"recalled": True, "found": True, "day": "2023-05-08"}  # under its day's heading
    assert found["0"] == {"recalled": True, "found": False, "day": None}
