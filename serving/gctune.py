"""The cyclic garbage collector, tuned once per server process after the app has loaded.

A decorate holds its window (a row and a message per history message) until its answer is encoded:
past ~700 messages every decorate set off a young collection (CPython's default threshold is 700
new objects), which walked them all, every tenth an older one, and now and then a full collection
of the whole app. Here the objects loaded at startup (Django, the apps, the URL and settings state)
are moved out of the collector's way (`gc.freeze`), and a young collection waits for
YOUNG_THRESHOLD new objects. Garbage without cycles is freed by reference counting as ever; cycles
wait a little longer. THREADLESS_GC_TUNING=0 leaves CPython's defaults.
"""

from __future__ import annotations

import gc
import os

YOUNG_THRESHOLD = 10_000


def enabled() -> bool:
    return os.environ.get("THREADLESS_GC_TUNING", "1").strip().lower() not in {"0", "false", "no", "off"}


def tune_gc() -> None:
    if not enabled():
        return
    gc.collect()
    gc.freeze()
    young, older, oldest = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_THRESHOLD), older, oldest)
