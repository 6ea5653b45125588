"""Threadless: memory for LLM agents that never stops your agent.

    from threadless import Threadless
    memory = Threadless()                       # THREADLESS_API_KEY / THREADLESS_BASE_URL
    req = memory.decorate(memory_id, messages=[{"role": "user", "content": "hi"}], instructions="…")
    reply = call_your_model(req.to_openai())
    memory.report(memory_id, messages=[{"role": "assistant", "content": reply}])

``threadless.window`` is the one token-estimate and window-fitting implementation; the server
imports it too.
"""

from ._async import AsyncThreadless
from ._errors import ThreadlessConnectionError, ThreadlessError, ThreadlessTimeoutError
from ._sync import Threadless
from ._types import DecoratedRequest, Entry, Fact, Memory, Page, Thread
from ._version import __version__

__all__ = [
    "AsyncThreadless",
    "DecoratedRequest",
    "Entry",
    "Fact",
    "Memory",
    "Page",
    "Thread",
    "Threadless",
    "ThreadlessConnectionError",
    "ThreadlessError",
    "ThreadlessTimeoutError",
    "__version__",
]
