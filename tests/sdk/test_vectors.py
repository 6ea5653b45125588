"""The SDK against the shared vectors in sdk/testdata (the server and the TypeScript SDK check the same
files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from threadless import Threadless
from threadless.window import fit_window, message_tokens

from .faults import Respond, error_body

DATA = Path(__file__).resolve().parents[2] / "sdk" / "testdata"
WINDOW_CASES = json.loads((DATA / "window_cases.json").read_text())
TOKEN_CASES = json.loads((DATA / "token_cases.json").read_text())


@pytest.mark.parametrize("case", TOKEN_CASES, ids=lambda c: str(c["message"].get("content"))[:20])
def test_token_estimates_match_the_vectors(case):
    assert message_tokens(case["message"]) == case["tokens"]


@pytest.mark.parametrize("case", WINDOW_CASES, ids=lambda c: c["name"])
def test_window_cuts_match_the_vectors(case):
    assert fit_window(case["history"], case["new_messages"], case["budget"]) == case["expected_start"]


def test_the_sdk_window_is_the_module_the_server_imports():
    import threadless.window

    from memories import context

    assert context.message_tokens is threadless.window.message_tokens


@pytest.mark.parametrize("case", WINDOW_CASES, ids=lambda c: c["name"])
def test_the_tail_keeps_the_history_the_vectors_keep(fault, errors, case):
    """A decorate answering history + new, cut to tail_tokens = the vector's budget, keeps exactly
    the history the vector keeps (the tail walks back from the new message like the server)."""
    history, new = case["history"], case["new_messages"]
    state = {"up": True}

    def responder(request):
        if not state["up"]:
            return Respond(503, error_body("unavailable", "down"))
        return Respond(
            200,
            {
                "memory_id": "mem_v",
                "turn": 1,
                "instructions": "",
                "context_text": "",
                "messages": history + new,
                "context": {},
                "usage": {},
            },
        )

    fault.responder = responder
    with Threadless(
        api_key="k", base_url=fault.url, timeout=2, tail_tokens=case["budget"], on_error=errors
    ) as memory:
        memory.decorate("mem_v", new)
        state["up"] = False
        tail = memory.decorate("mem_v", []).messages
    if tail[-len(new) :] == new:
        assert tail[: len(tail) - len(new)] == history[case["expected_start"] :]
    else:
        # The new message is not a user message and no user message fits: the window keeps no
        # history, and the tail (which must start at a user message) keeps nothing either.
        assert case["expected_start"] == len(history) and tail == []
