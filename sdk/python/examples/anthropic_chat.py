"""Threadless memory in front of Anthropic's own SDK (req.to_anthropic()).

    pip install anthropic
    ANTHROPIC_API_KEY=... python sdk/python/examples/anthropic_chat.py

Skips (exit 0) when ANTHROPIC_API_KEY is not set or the anthropic package is missing.
ANTHROPIC_MODEL picks the model.
"""

from __future__ import annotations

import os
import sys

from _setup import demo_settings
from threadless import Threadless


def main() -> int:
    if not os.environ.get("ANTHROPIC_API_KEY"):
        print("ANTHROPIC_API_KEY is not set: skipping the Anthropic example.")
        return 0
    try:
        from anthropic import Anthropic
    except ImportError:
        print(
            "The anthropic package is not installed (pip install anthropic): skipping the Anthropic example."
        )
        return 0

    key, base_url = demo_settings()
    model = os.environ.get("ANTHROPIC_MODEL", "claude-3-5-haiku-latest")
    llm = Anthropic()
    with Threadless(api_key=key, base_url=base_url) as memory:
        m = memory.create(metadata={"example": "anthropic_chat"})
        for text in [
            "Hi, I'm Ada. I have a beagle called Biscuit.",
            "What is my dog's name, and what breed?",
        ]:
            request = memory.decorate(
                m.id,
                [{"role": "user", "content": text}],
                instructions="You are a concise, friendly assistant.",
            )
            answer = llm.messages.create(model=model, max_tokens=512, **request.to_anthropic())
            reply = "".join(block.text for block in answer.content if block.type == "text")
            memory.report_anthropic(m.id, answer)  # the Message as it came (text and tool_use blocks)
            print(f"user: {text}\nassistant{' (degraded)' if request.degraded else ''}: {reply}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
