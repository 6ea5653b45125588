"""The server cuts windows exactly as the shared vectors say (the SDKs check the same files)."""

import json
from pathlib import Path

import pytest
from threadless.window import fit_window, message_tokens

from common.messages import entry_fields
from memories.context import context_build
from memories.services import entries_append, memory_create

DATA = Path(__file__).resolve().parents[2] / "sdk" / "testdata"
WINDOW_CASES = json.loads((DATA / "window_cases.json").read_text())
TOKEN_CASES = json.loads((DATA / "token_cases.json").read_text())


@pytest.mark.parametrize("case", TOKEN_CASES, ids=lambda c: str(c["message"].get("content"))[:20])
def test_token_estimate_matches_the_shared_vectors(case):
    assert message_tokens(case["message"]) == case["tokens"]


@pytest.mark.parametrize("case", WINDOW_CASES, ids=lambda c: c["name"])
def test_sdk_window_matches_the_shared_vectors(case):
    assert fit_window(case["history"], case["new_messages"], case["budget"]) == case["expected_start"]


@pytest.mark.parametrize("case", WINDOW_CASES, ids=lambda c: c["name"])
def test_server_window_read_from_the_database_matches_the_vectors(cast, case):
    memory, _ = memory_create(project=cast.project_a)
    if case["history"]:
        entries_append(memory=memory, items=[entry_fields(m) for m in case["history"]])
    ctx = context_build(
        memory=memory,
        new_messages=case["new_messages"],
        budget_tokens=case["budget"],
        recall=False,
        before_seq=memory.last_seq + 1,
    )
    kept = case["history"][case["expected_start"] :]
    assert ctx.history_count == len(kept)
    assert [m["role"] for m in ctx.messages[: len(kept)]] == [m["role"] for m in kept]
