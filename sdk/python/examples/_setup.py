"""Where the examples find their key: THREADLESS_API_KEY, else the demo key `make run` keeps in
var/demo.json."""

from __future__ import annotations

import json
import os
from pathlib import Path


def demo_settings() -> tuple[str, str]:
    base_url = os.environ.get("THREADLESS_BASE_URL") or f"http://127.0.0.1:{os.environ.get('PORT', '8000')}"
    key = os.environ.get("THREADLESS_API_KEY")
    if not key:
        here = Path(__file__).resolve()
        for candidate in [Path.cwd() / "var" / "demo.json", *(p / "var" / "demo.json" for p in here.parents)]:
            if candidate.is_file():
                key = json.loads(candidate.read_text()).get("key")
                break
    if not key:
        raise SystemExit(
            "No key: set THREADLESS_API_KEY, or run this from the Threadless checkout after `make run`."
        )
    return key, base_url
