"""Process-local graceful-shutdown signal.

This is deliberately per process: it only says "this process is stopping", which is exactly
the scope of a SIGTERM. Turn runners check `shutting_down()` at every task boundary.
"""

from __future__ import annotations

import asyncio
import logging
import threading

_event = threading.Event()
_hooks: list = []


def shutting_down() -> bool:
    return _event.is_set()


def request_shutdown() -> None:
    """Raise the flag now (a signal handler's part; `begin_shutdown` also runs the hooks)."""
    _event.set()


def on_shutdown(hook) -> None:
    """Register an async callable run when shutdown begins (e.g. wait for running turns)."""
    _hooks.append(hook)


async def begin_shutdown() -> None:
    request_shutdown()
    for hook in list(_hooks):
        try:
            await asyncio.wait_for(hook(), timeout=25)
        except Exception:  # noqa: BLE001 - shutdown must go on whatever one hook does
            logging.getLogger(__name__).exception("shutdown hook failed")
