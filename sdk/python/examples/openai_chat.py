"""Threadless memory in front of OpenAI's own SDK.

    pip install openai
    OPENAI_API_KEY=sk-... python sdk/python/examples/openai_chat.py

Skips (exit 0) when OPENAI_API_KEY is not set or the openai package is missing. OPENAI_MODEL
picks the model (default gpt-4o-mini); OPENAI_BASE_URL works as usual with OpenAI's SDK.
"""

from __future__ import annotations

import os
import sys

from _setup import demo_settings
from threadless import Threadless


def main() -> int:
    if not os.environ.get("OPENAI_API_KEY"):
        print("OPENAI_API_KEY is not set: skipping the OpenAI example.")
        return 0
    try:
        from openai import OpenAI
    except ImportError:
        print("The openai package is not installed (pip install openai): skipping the OpenAI example.")
        return 0

    key, base_url = demo_settings()
    model = os.environ.get("OPENAI_MODEL", "gpt-4o-mini")
    llm = OpenAI()
    with Threadless(api_key=key, base_url=base_url) as memory:
        m = memory.create(metadata={"example": "openai_chat"})
        for text in [
            "Hi, I'm Ada. I have a beagle called Biscuit.",
            "What is my dog's name, and what breed?",
        ]:
            request = memory.decorate(
                m.id,
                [{"role": "user", "content": text}],
                instructions="You are a concise, friendly assistant.",
            )
            completion = llm.chat.completions.create(model=model, messages=request.to_openai())
            reply = completion.choices[0].message
            # Report what came after decorate: the reply as it came (tool calls included).
            memory.report_openai(m.id, completion)
            print(f"user: {text}\nassistant{' (degraded)' if request.degraded else ''}: {reply.content}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
