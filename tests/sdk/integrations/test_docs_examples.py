"""The Python examples in docs/integrations.md run as written against a live server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.live

DOC = Path(__file__).resolve().parents[3] / "docs" / "integrations.md"
# A fenced block right after an "<!-- example: name -->" marker (bounded, linear-time pattern).
BLOCK = re.compile(r"<!-- example: ([a-z-]+) -->\n```([a-z]+)\n(.*?)\n```", re.DOTALL)


def examples() -> dict[str, tuple[str, str]]:
    return {name: (lang, code) for name, lang, code in BLOCK.findall(DOC.read_text())}


def test_the_page_has_one_example_per_framework():
    assert {name: lang for name, (lang, _) in examples().items()} == {
        "langchain": "python", "agents": "python", "agents-proxy": "python", "mcp": "python", "vercel-ai": "js"}
    # agents-proxy needs a provider stub upstream: tests/proxy/test_docs_examples.py runs it.


@pytest.mark.parametrize("name, expected", [
    ("langchain", ["Hello Ada!", "You are Ada.", "['My name is Ada.', 'Hello Ada!', 'Who am I?', 'You are Ada.']"]),
    ("agents", ["Hello Ada!", "You are Ada.", "['user', 'assistant', 'user', 'assistant']"]),
    ("mcp", ["['forget', 'list_facts', 'remember', 'search_memory']", "[\"The user's dog is called Biscuit.\"]"]),
])
def test_the_example_runs_and_prints_what_the_page_promises(live_server_proc, tmp_path, name, expected):
    script = tmp_path / f"example_{name}.py"  # not mcp.py: it would shadow the package
    script.write_text(examples()[name][1])
    env = {**os.environ, "THREADLESS_API_KEY": live_server_proc.key, "THREADLESS_BASE_URL": live_server_proc.url,
           "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == expected
