"""SIGTERM/SIGINT under uvicorn: raise the shutdown flag as soon as the signal arrives.

uvicorn only sends the ASGI lifespan shutdown after open requests have finished, which is too
late for a running turn to stop at its next task boundary. So, when the process is a uvicorn
server, its signal handler is chained: the signal first sets `common.shutdown`'s flag
(turns stop at the next boundary and end EXECUTION_INTERRUPTED), then uvicorn handles it as
usual (stops accepting, waits for open requests, exits).
"""

from __future__ import annotations

import signal
import threading

from common.shutdown import request_shutdown

_installed = False


def install_if_uvicorn() -> bool:
    """Chain the shutdown flag in front of uvicorn's handlers (main thread only, once)."""
    global _installed
    if _installed or threading.current_thread() is not threading.main_thread():
        return _installed
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(sig)
        owner = getattr(previous, "__self__", None)
        if owner is None or not type(owner).__module__.startswith("uvicorn"):
            continue

        def handler(signum, frame, _previous=previous):
            request_shutdown()
            _previous(signum, frame)

        signal.signal(sig, handler)
        _installed = True
    return _installed
