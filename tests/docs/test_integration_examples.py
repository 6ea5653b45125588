"""The Python examples in docs/integrations.md and the README run as written against a live server,
from a fresh shell: no activated virtualenv, the venv's directory not on PATH, another working
directory (the user runs `.venv/bin/python example.py`)."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from harness.servers import free_port

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "integrations.md"
README = ROOT / "README.md"
# A fenced block right after an "<!-- example: name -->" marker (bounded, linear-time pattern).
BLOCK = re.compile(r"<!-- example: ([a-z-]+) -->\n```([a-z]+)\n(.*?)\n```", re.DOTALL)


def examples() -> dict[str, tuple[str, str]]:
    return {
        name: (lang, code) for doc in (DOC, README) for name, lang, code in BLOCK.findall(doc.read_text())
    }


def fresh_shell_env(server) -> dict:
    """What a new terminal has: the system PATH without the venv, no VIRTUAL_ENV, the server's key."""
    venv_bin = str(Path(sys.executable).parent)
    path = os.pathsep.join(
        p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep) if p != venv_bin
    )
    keep = {k: v for k, v in os.environ.items() if k in {"HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT"}}
    return {**keep, "PATH": path, "THREADLESS_API_KEY": server.key, "THREADLESS_BASE_URL": server.url}


def test_the_pages_have_one_example_per_framework():
    assert {name: lang for name, (lang, _) in examples().items()} == {
        "langchain": "python",
        "agents": "python",
        "agents-proxy": "python",
        "anthropic-memory": "python",
        "mcp": "python",
        "mcp-http": "python",
        "vercel-ai": "js",
        "readme-sdk": "python",
        "readme-memory-tool": "python",
        "readme-sdk-ts": "ts",
        "anthropic-memory-ts": "ts",
    }
    # agents-proxy needs a provider stub upstream: tests/proxy/test_docs_examples.py runs it; the
    # ts and js examples run in test_typescript_examples.py.


@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "langchain",
            ["Hello Ada!", "You are Ada.", "['My name is Ada.', 'Hello Ada!', 'Who am I?', 'You are Ada.']"],
        ),
        ("agents", ["Hello Ada!", "You are Ada.", "['user', 'assistant', 'user', 'assistant']"]),
        (
            "mcp",
            [
                "2026-07-28",
                "['forget', 'list_facts', 'list_notes', 'read_note', 'remember', 'search_memory', "
                "'write_note']",
                '["The user\'s dog is called Biscuit."]',
                "Biscuit, a beagle.",
            ],
        ),
        (
            "anthropic-memory",
            [
                "File created successfully at: /memories/prefs.md",
                "The memory file has been edited. Here is the snippet showing the change (with line "
                "numbers):",
                "     1\tCoffee, no sugar.",
                "     2\t",
                "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:",
                "4K\t/memories",
                "18B\t/memories/prefs.md",
                "['/memories/prefs.md']",
            ],
        ),
        ("readme-sdk", ["You said: hi", "['user', 'assistant']"]),
        ("readme-memory-tool", ["File created successfully at: /memories/notes.md"]),
    ],
)
def test_the_example_runs_and_prints_what_the_page_promises(live_server_proc, tmp_path, name, expected):
    script = tmp_path / f"example_{name.replace('-', '_')}.py"  # not mcp.py: it would shadow the package
    script.write_text(examples()[name][1])
    done = subprocess.run(
        [sys.executable, str(script)],
        env=fresh_shell_env(live_server_proc),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == expected


def test_the_mcp_http_example_reaches_threadless_mcp_with_its_token(live_server_proc, tmp_path):
    # The page's server command (`threadless mcp --transport http`), on a free port instead of 8765.
    token, port = secrets.token_urlsafe(32), free_port()
    env = {**fresh_shell_env(live_server_proc), "THREADLESS_MCP_TOKEN": token}
    server = subprocess.Popen(
        [sys.executable, "-m", "threadless", "mcp", "--transport", "http", "--port", str(port)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.time() + 60
        while server.poll() is None and time.time() < deadline:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(0.1)
        assert server.poll() is None, server.stderr.read().decode()
        script = tmp_path / "example_mcp_http.py"
        script.write_text(examples()["mcp-http"][1])
        done = subprocess.run(
            [sys.executable, str(script)],
            env={**env, "THREADLESS_MCP_URL": url},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        server.terminate()
        server.wait(timeout=20)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["2026-07-28", "['The user prefers window seats.']"]
