"""A tiny agent that keeps answering while Threadless is down.

    make run                                  # in the Threadless checkout (prints the demo key)
    python sdk/python/examples/chat_demo.py   # key from THREADLESS_API_KEY or var/demo.json

It talks for --turns turns, one every --interval seconds (or reads your lines with -i). Stop the
server mid-conversation (Ctrl-C on `make run`) and watch it keep answering from the local tail,
marked [degraded]; start it again and it is back to [live]. The "model" is a stand-in that says
what it was given, so you can see what each request contained.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time

from _setup import demo_settings
from threadless import DecoratedRequest, Threadless, ThreadlessError

QUESTIONS = [
    "Hi! My name is Ada and I have a beagle called Biscuit.",
    "What should I feed a beagle puppy?",
    "How often should Biscuit go for a walk?",
    "Do you remember my name?",
    "And my dog's name?",
    "Any tips for training him to sit?",
]


def demo_model(request: DecoratedRequest) -> str:
    """Stands in for an LLM: answers with what it was given (no network, no key)."""
    said = request.messages[-1]["content"]
    earlier = len(request.messages) - 1
    facts = request.context.get("facts") or []
    mode = "from the local tail" if request.degraded else "from Threadless"
    return (
        f"You said {said!r}. I was given {earlier} earlier message(s) and "
        f"{len(request.instructions)} characters of instructions ({len(facts)} fact(s)), {mode}."
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-i", "--interactive", action="store_true", help="read your messages from stdin")
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--timeout", type=float, default=3.0, help="the SDK's total deadline per call")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")

    key, base_url = demo_settings()

    def on_error(error, context):
        print(
            f"    ! {context['operation']} on {context['memory_id']}: {error.code} ({error.message[:80]})",
            file=sys.stderr,
        )

    with Threadless(api_key=key, base_url=base_url, timeout=args.timeout, on_error=on_error) as memory:
        try:
            m = memory.create(
                metadata={"example": "chat_demo"}, instructions="You are a friendly dog-care assistant."
            )
        except ThreadlessError as error:  # only decorate and report keep going without the service
            print(f"Could not create the memory on {base_url}: {error}", file=sys.stderr)
            return 1
        print(f"memory {m.id} on {base_url}\n")
        lines = sys.stdin if args.interactive else (QUESTIONS[i % len(QUESTIONS)] for i in range(args.turns))
        for line in lines:
            text = line.strip()
            if not text:
                continue
            started = time.perf_counter()
            request = memory.decorate(m.id, [{"role": "user", "content": text}])
            reply = demo_model(request)
            memory.report(m.id, [{"role": "assistant", "content": reply}])
            took = (time.perf_counter() - started) * 1000
            print(f"[{'degraded' if request.degraded else 'live'}] user: {text}")
            print(f"    assistant: {reply}  ({took:.0f} ms)")
            if not args.interactive:
                time.sleep(args.interval)
    return 0


if __name__ == "__main__":
    sys.exit(main())
