"""A request's thread waiting on work done elsewhere (a model call in another thread, a provider):
`with waiting_aside(): future.result()`.

The thread pool that runs the request (serving.syncviews) may then run another request meanwhile:
on SQLite a process has one view thread, and a decorate that waits for its query's embedding would
otherwise hold every other request of the process in line, so they could never share a model call.
The pool says how, by setting LEND for the calls it runs; elsewhere (a Celery task, a test, the
Django test client) LEND is unset and this is a plain wait.

Only a thread that holds no transaction lends itself: one inside `atomic` (an Idempotency-Key's
locked memory) would keep that lock while others ran. Low level on purpose: no imports from the apps.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from contextvars import ContextVar

from django.db import connection

# Set by the pool running this call: a context manager during which the pool may run one more call.
LEND: ContextVar[Callable[[], AbstractContextManager] | None] = ContextVar("threadless_lend", default=None)


def waiting_aside() -> AbstractContextManager:
    """Around a wait on other work: the pool running this thread may lend its place meanwhile."""
    lend = LEND.get()
    if lend is None or connection.in_atomic_block:
        return contextlib.nullcontext()
    return lend()
