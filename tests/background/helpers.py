"""Shared helpers for the background-memory tests: talk to a memory in-process and run its
background work the way the worker would (through the outbox)."""

from __future__ import annotations

import json
from pathlib import Path

from harness import factscore
from memories import services
from memories.models import Memory, Outbox

CORPUS = json.loads((Path(__file__).resolve().parents[1] / "data" / "background_corpus.json").read_text())
RECALL_CORPUS = json.loads((Path(__file__).resolve().parents[1] / "data" / "recall_corpus.json").read_text())


def extractor_score(split: str) -> tuple[float, float]:
    """The rule extractor's (precision, fact recall) on one split of the generated corpus's labelled
    user lines (tests/data/make_recall_corpus.py): a fact counts when its slot matches and its
    text holds every word the label says it must (harness.factscore, also bench.extractor_eval)."""
    result = factscore.score(x for x in RECALL_CORPUS["fact_lines"] if x["split"] == split)
    return result["precision"], result["fact_recall"]


OWN_SENTENCES = json.loads((Path(__file__).resolve().parents[1] / "data" / "extractor_own.json").read_text())


def own_score(name: str) -> tuple[float, float]:
    """(precision, fact recall) on one set of tests/data/extractor_own.json, scored like
    `extractor_score`; lines whose facts are null are not scored."""
    result = factscore.score(x for x in OWN_SENTENCES["sets"][name] if x["facts"] is not None)
    return result["precision"], result["fact_recall"]


def drain() -> int:
    """Process every pending outbox row, as the worker does."""
    done = 0
    for outbox_id in Outbox.objects.filter(processed_at=None).order_by("id").values_list("id", flat=True):
        done += services.outbox_process(outbox_id=outbox_id)
    return done


def converse(memory: Memory, turns: list, instructions: str | None = None, budget_tokens: int = 60000) -> Memory:
    """decorate (the user's message) then report (the reply) for each turn, like an SDK user."""
    for user, assistant in turns:
        services.memory_decorate(memory=memory, messages=[{"role": "user", "content": user}],
                                 instructions=instructions, budget_tokens=budget_tokens)
        services.report_accept(memory=memory, messages=[{"role": "assistant", "content": assistant}], failures=[])
    memory.refresh_from_db()
    return memory
