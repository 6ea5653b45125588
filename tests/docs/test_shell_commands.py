"""Every shell block in README.md and docs/*.md runs as pasted (test_integration_examples.py
and test_typescript_examples.py run the code examples of docs/integrations.md the same way).

A marker comment on the line before each ```bash block says how it is checked:

* `<!-- shell: server -->`: against a running server on a fresh database, as a user does in a
  second terminal while `make run` serves (`PORT` points at it). A file's server blocks run in
  order in one shell, so a later block uses what an earlier one set (`$KEY`, `$MEM`).
  `server local-model` blocks talk to a model server on 127.0.0.1:11434: a local stub here.
* `<!-- shell: fresh -->`: on a fresh database with no server.
* `<!-- shell: install -->`: installs packages; test_install_lines.py runs it in a fresh clone with
  a fresh virtualenv and npm project.
* `<!-- shell: skip (why) -->`: not run (it serves until Ctrl-C, needs your production hosts or a
  provider key).

Each script runs under `set -euo pipefail` with `curl` failing on an HTTP error status, so a
command that answers 4xx or 5xx fails the test.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

import pytest

from harness.servers import ThreadlessServer

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# An optional marker line, then a fenced shell block (bounded: a fence ends at the next ``` line).
BLOCK = re.compile(
    r"(?:<!-- shell: ([a-z -]+?)(?: \([^)\n]*\))? -->\n)?```(?:bash|sh|shell)\n(.*?)\n```", re.DOTALL
)
CODE = re.compile(r"```(bash|sh|shell|python|py|ts|js|javascript|typescript|html)\n(.*?)\n```", re.DOTALL)
PRELUDE = 'set -euo pipefail\ncurl() { command curl --fail-with-body --show-error "$@"; echo; }\n'
LOCAL_MODEL_PORT = "11434"


def blocks() -> list[tuple[Path, int, str, str]]:
    """(file, line, marker, script) of every shell block."""
    out = []
    for path in DOCS:
        text = path.read_text()
        for match in BLOCK.finditer(text):
            out.append(
                (path, text.count("\n", 0, match.start()) + 1, (match.group(1) or "").strip(), match.group(2))
            )
    return out


def run(script: str, env: dict, timeout: int = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-c", PRELUDE + script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_every_shell_block_says_how_it_is_checked():
    unmarked = [
        f"{path.name}:{line}"
        for path, line, marker, _ in blocks()
        if marker.split(" ")[0] not in {"server", "fresh", "install", "skip"}
    ]
    assert unmarked == []
    assert sum(marker.startswith("server") for _, _, marker, _ in blocks()) >= 10


def test_code_in_the_docs_uses_plain_ascii_placeholders():
    # A literal "sk-…" in a header crashes the HTTP client (UnicodeEncodeError) before any request.
    found = [
        f"{path.name}: {line.strip()}"
        for path in DOCS
        for _, code in CODE.findall(path.read_text())
        for line in code.splitlines()
        if "…" in line.split("#")[0].split("//")[0]
    ]
    assert found == []


@pytest.fixture(scope="module")
def local_model():
    from tests.chat.stubs import Stub

    stub = Stub()
    stub.set(
        "/v1/chat/completions",
        json_body={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "llama3.2",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "Hello Ana!"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
        },
    )
    yield stub
    stub.close()


@pytest.fixture(scope="module")
def docs_server():
    server = ThreadlessServer(worker=True, env={"THREADLESS_EGRESS_ALLOW": "127.0.0.1"}).start()
    yield server
    server.stop()


def _by_file(marker: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path, _, found, script in blocks():
        if found.split(" ")[0] == marker:
            out.setdefault(path.name, []).append((found, script))
    return out


@pytest.mark.live
@pytest.mark.parametrize("name", sorted(_by_file("server")))
def test_the_server_commands_of_a_page_run_as_pasted(docs_server, local_model, name):
    port = local_model.url.rsplit(":", 1)[1]
    script = "\n".join(
        code.replace(f"127.0.0.1:{LOCAL_MODEL_PORT}", f"127.0.0.1:{port}") if "local-model" in found else code
        for found, code in _by_file("server")[name]
    )
    env = {**docs_server.env, "PORT": str(docs_server.port), "OPENAI_API_KEY": "sk-test-not-a-real-key"}
    done = run(script, env)
    assert done.returncode == 0, f"{name}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    if "local-model" in {found for found, _ in _by_file("server")[name]}:
        assert "Hello Ana!" in done.stdout  # the reply came from the local model server


@pytest.mark.live
@pytest.mark.parametrize("name", sorted(_by_file("fresh")))
def test_the_commands_for_a_fresh_database_run_as_pasted(name):
    with tempfile.TemporaryDirectory(prefix="tl-docs-") as var:
        env = {
            k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL"}
        }
        env.update({"THREADLESS_VAR_DIR": var, "DATABASE_URL": f"sqlite:///{var}/threadless.sqlite3"})
        done = run("\n".join(code for _, code in _by_file("fresh")[name]), env)
    assert done.returncode == 0, f"{name}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
