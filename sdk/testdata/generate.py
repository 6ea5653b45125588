"""Produce sdk/testdata/window_cases.json and token_cases.json from threadless.window.

Run once when the rules change (`python sdk/testdata/generate.py`); the server tests, the Python
SDK tests and the TypeScript tests all check these files, so the three can never disagree.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from threadless.window import fit_window, message_tokens

HERE = Path(__file__).resolve().parent

TEXTS = [
    "",
    "a",
    "abcd",
    "abcde",
    "héllo wörld",
    "日本語のテキスト",
    "mixed 中文 text",
    "emoji 😀 here",
    "\u2fff edge",
    "\u3000 ideographic space",
    "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 astral",
    "x" * 999,
    "tab\tnewline\n",
]


def token_cases() -> list[dict]:
    cases = [{"message": {"role": "user", "content": t}} for t in TEXTS]
    cases += [
        {
            "message": {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "data:x"}},
                ],
            }
        },
        {
            "message": {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "bcd"}],
            }
        },
        {
            "message": {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Zürich"}'},
                    }
                ],
            }
        },
        {
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            }
        },
        {"message": {"role": "tool", "content": '{"temp": 21}', "tool_call_id": "call_1"}},
    ]
    for case in cases:
        case["tokens"] = message_tokens(case["message"])
    return cases


def conversation(rng: random.Random, turns: int) -> list[dict]:
    out: list[dict] = []
    for t in range(turns):
        out.append({"role": "user", "content": f"question {t} " + "q" * rng.randint(0, 80)})
        if rng.random() < 0.3:
            call_id = f"call_{t}"
            out.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "lookup", "arguments": json.dumps({"t": t})},
                        }
                    ],
                }
            )
            out.append({"role": "tool", "tool_call_id": call_id, "content": "r" * rng.randint(1, 120)})
        out.append({"role": "assistant", "content": f"answer {t} " + "a" * rng.randint(0, 150)})
    return out


def window_cases() -> list[dict]:
    rng = random.Random(20261130)
    cases = []
    named = [
        ("empty history", [], [{"role": "user", "content": "hi"}], 100),
        ("everything fits", conversation(random.Random(1), 3), [{"role": "user", "content": "next"}], 60000),
        (
            "history starting with an assistant greeting is cut at the first user message",
            [
                {"role": "assistant", "content": "Welcome!"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
            ],
            [{"role": "user", "content": "and?"}],
            60000,
        ),
        (
            "new messages alone exceed the budget: no history",
            conversation(random.Random(2), 2),
            [{"role": "user", "content": "x" * 400}],
            50,
        ),
        (
            "oversized turn: new tool results with no user message keep from the newest user message",
            [
                {"role": "user", "content": "u" * 400},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                    ],
                },
            ],
            [{"role": "tool", "tool_call_id": "c", "content": "result"}],
            20,
        ),
        ("budget of one token", conversation(random.Random(3), 2), [{"role": "user", "content": "q"}], 1),
        (
            "history with no user message at all",
            [{"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}],
            [{"role": "user", "content": "q"}],
            60000,
        ),
    ]
    for name, history, new, budget in named:
        cases.append({"name": name, "history": history, "new_messages": new, "budget": budget})
    for i in range(40):
        history = conversation(rng, rng.randint(0, 12))
        new: list[dict] = [{"role": "user", "content": "new " + "n" * rng.randint(0, 60)}]
        if rng.random() < 0.2 and history:
            new = [{"role": "tool", "tool_call_id": "x", "content": "late result"}]
        total = sum(message_tokens(m) for m in history + new)
        budget = rng.randint(5, max(6, total + 10))
        cases.append({"name": f"random {i}", "history": history, "new_messages": new, "budget": budget})
    for case in cases:
        case["expected_start"] = fit_window(case["history"], case["new_messages"], case["budget"])
    return cases


if __name__ == "__main__":
    (HERE / "token_cases.json").write_text(json.dumps(token_cases(), indent=1, ensure_ascii=False) + "\n")
    (HERE / "window_cases.json").write_text(json.dumps(window_cases(), indent=1, ensure_ascii=False) + "\n")
    print("wrote token_cases.json and window_cases.json")
