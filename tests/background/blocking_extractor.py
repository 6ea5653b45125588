"""A rule extractor that can be held mid-job, so a test can kill the worker while it runs.

Loaded by the worker through THREADLESS_FACT_EXTRACTOR; TL_TEST_BLOCK_DIR names a folder where
each run appends to `runs.log` and waits while a `block` file exists."""

from __future__ import annotations

import os
import time
from pathlib import Path

from memories.facts import RuleExtractor


class BlockingRuleExtractor(RuleExtractor):
    def extract(self, messages):
        folder = Path(os.environ["TL_TEST_BLOCK_DIR"])
        with open(folder / "runs.log", "a") as log:
            log.write("start\n")
        deadline = time.time() + 120
        while (folder / "block").exists() and time.time() < deadline:
            time.sleep(0.05)
        return super().extract(messages)
