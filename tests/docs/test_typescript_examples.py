"""The TypeScript and JavaScript examples in README.md, docs/integrations.md and sdk/typescript/README.md
run as written against a live server, from a fresh shell: the system `node`, no activated
virtualenv, in a project of their own (a `package.json` with `"type": "module"` and the packages
a user would `npm install`, linked from sdk/typescript), `.ts` files run with `node --import tsx`.

The package's README talks to `http://127.0.0.1:8000` (the server `make run` starts): the test
points that origin at the live server. Its provider calls (`new OpenAI()`, `new Anthropic()`) reach
a local stub provider through the clients' own `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.chat.stubs import Stub
from tests.docs.test_integration_examples import examples, fresh_shell_env

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
SDK = ROOT / "sdk" / "typescript"
SDK_README = SDK / "README.md"
TS_BLOCK = re.compile(r"^```ts\n(.*?)\n```$", re.DOTALL | re.MULTILINE)
MAKE_RUN_ORIGIN = "http://127.0.0.1:8000"
# What a user's project installs next to `threadless` (npm install threadless ai @anthropic-ai/sdk …).
LINKED = ["threadless", "ai", "@ai-sdk/provider", "@anthropic-ai/sdk", "openai", "tsx"]


@pytest.fixture
def project(typescript_sdk, tmp_path) -> Path:
    """A user's ES-module project with threadless and the frameworks installed (linked)."""
    (tmp_path / "package.json").write_text(json.dumps({"private": True, "type": "module"}))
    for name in LINKED:
        link = tmp_path / "node_modules" / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(typescript_sdk if name == "threadless" else typescript_sdk / "node_modules" / name)
    return tmp_path


def run_example(project: Path, name: str, code: str, env: dict) -> subprocess.CompletedProcess:
    script = project / name
    script.write_text(code)
    command = ["node", "--import", "tsx", name] if name.endswith(".ts") else ["node", name]
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=180)


@pytest.fixture
def memory(live_server_proc):
    from threadless import Threadless

    with Threadless(api_key=live_server_proc.key, base_url=live_server_proc.url) as client:
        yield client


def test_every_typescript_block_of_the_pages_is_a_named_example():
    # An unnamed block would be type-checked (scripts/readme-examples.mjs) but never run.
    for page in (ROOT / "README.md", ROOT / "docs" / "integrations.md"):
        text = page.read_text()
        named = len(re.findall(r"<!-- example: [a-z-]+ -->\n```(?:ts|js)\n", text))
        assert named == len(re.findall(r"^```(?:ts|js)$", text, re.MULTILINE)), page.name


@pytest.mark.parametrize(
    "name, expected",
    [
        ("readme-sdk-ts", ["You said: hi", "[ 'user', 'assistant' ]"]),
        (
            "anthropic-memory-ts",
            [
                "File created successfully at: /memories/prefs.md",
                "The memory file has been edited. Here is the snippet showing the change (with line "
                "numbers):",
                "     1\tCoffee, no sugar.",
                "     2\t",
                "Here's the content of /memories/prefs.md with line numbers:",
                "     1\tCoffee, no sugar.",
                "     2\t",
            ],
        ),
        ("vercel-ai", ["Hello Ada!", "You are Ada.", "system,user,assistant,user"]),
    ],
)
def test_the_example_runs_and_prints_what_the_page_promises(
    live_server_proc, memory, project, name, expected
):
    lang, code = examples()[name]
    done = run_example(project, f"example.{lang}", code, fresh_shell_env(live_server_proc))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == expected
    assert done.stderr == ""
    leftover = {"readme-sdk-ts": "readme-ts-user-42", "anthropic-memory-ts": "docs-anthropic-ts-user-42"}
    if name in leftover:  # the example cleans up after itself
        assert memory.list(external_id=leftover[name]).data == []


@pytest.fixture
def providers():
    stub = Stub()
    stub.set(
        "/v1/chat/completions",
        json_body={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4o-mini",
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
    stub.set(
        "/v1/messages",
        json_body={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [{"type": "text", "text": "Hello again, Ana."}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 9, "output_tokens": 4},
        },
    )
    yield stub
    stub.close()


def test_the_package_readme_examples_run_with_a_provider(live_server_proc, memory, project, providers):
    memory.delete_matching(external_id="user-42")
    blocks = TS_BLOCK.findall(SDK_README.read_text())
    # The OpenAI quickstart, the same user with Anthropic, then threads (another user, deleted at its end).
    assert len(blocks) == 3
    env = {
        **fresh_shell_env(live_server_proc),
        "OPENAI_API_KEY": "sk-test-not-a-real-key",
        "OPENAI_BASE_URL": providers.url + "/v1",
        "ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key",
        "ANTHROPIC_BASE_URL": providers.url,
    }
    for i, code in enumerate(blocks, 1):
        done = run_example(
            project, f"example{i}.ts", code.replace(MAKE_RUN_ORIGIN, live_server_proc.url), env
        )
        assert done.returncode == 0, done.stderr
        assert (done.stdout, done.stderr) == ("", "")  # nothing printed: onError heard no fallback
    openai_call, anthropic_call = (r.json for r in providers.requests)
    assert openai_call["messages"][0]["role"] == "system"
    assert openai_call["messages"][0]["content"].startswith("You are a helpful assistant.")
    assert openai_call["messages"][-1] == {"role": "user", "content": "Hi, I am Ana."}
    assert [m["role"] for m in anthropic_call["messages"]] == ["user", "assistant", "user"]
    assert memory.list(external_id="user-43").data == []
    [mem] = memory.list(external_id="user-42").data
    assert [(e.role, e.content) for e in memory.entries.all(mem.id)] == [
        ("user", "Hi, I am Ana."),
        ("assistant", "Hello Ana!"),
        ("user", "Hello"),
        ("assistant", "Hello again, Ana."),
    ]
    memory.delete(mem.id)
