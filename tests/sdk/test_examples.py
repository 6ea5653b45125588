"""The examples in sdk/python/examples run as a user would run them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "sdk" / "python" / "examples"


def run(name: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "THREADLESS_API_KEY", "THREADLESS_BASE_URL"}
    }
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.live
def test_chat_demo_answers_against_a_live_server(live_server_proc):
    done = run(
        "chat_demo.py",
        "--turns",
        "2",
        "--interval",
        "0",
        env={"THREADLESS_API_KEY": live_server_proc.key, "THREADLESS_BASE_URL": live_server_proc.url},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("[live] user:") == 2


def test_chat_demo_says_clearly_when_it_cannot_create_its_memory(refused_url):
    # create() is an ordinary API call (it raises); only decorate and report keep going without us.
    done = run(
        "chat_demo.py",
        "--turns",
        "1",
        "--interval",
        "0",
        env={"THREADLESS_API_KEY": "tl_proj_x", "THREADLESS_BASE_URL": refused_url},
    )
    assert done.returncode != 0
    assert "Could not create the memory" in done.stderr and "connection_error" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "name, variable", [("openai_chat.py", "OPENAI_API_KEY"), ("anthropic_chat.py", "ANTHROPIC_API_KEY")]
)
def test_provider_examples_skip_cleanly_without_a_key(name, variable):
    done = run(name)
    assert done.returncode == 0, done.stderr
    assert f"{variable} is not set" in done.stdout
