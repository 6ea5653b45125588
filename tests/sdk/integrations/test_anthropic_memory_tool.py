"""ThreadlessMemoryTool in the `anthropic` package's own tool runner, against a local stub model
(a real socket) that issues the memory tool's commands one reply at a time. The texts the model
gets back are compared with what the package's reference backend (BetaLocalFilesystemMemoryTool
on a temp dir) gives for the same loop."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable
from http.server import ThreadingHTTPServer

import httpx
import pytest
from anthropic import Anthropic, AsyncAnthropic
from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool
from anthropic.tools.memory import BetaLocalFilesystemMemoryTool
from threadless import AsyncThreadless, Threadless
from threadless.integrations.anthropic import AsyncThreadlessMemoryTool, ThreadlessMemoryTool

from harness.stubhttp import StubHandler

pytestmark = pytest.mark.live

# What the stub model asks for, one command per reply: all six, and the bad ones.
LOOP = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/user.md", "file_text": "Name: Ada\nCity: Oslo\nCity: Oslo\n"},
    {"command": "create", "path": "/memories/user.md", "file_text": "twice"},
    {
        "command": "str_replace",
        "path": "/memories/user.md",
        "old_str": "City: Oslo",
        "new_str": "City: Bergen",
    },
    {
        "command": "str_replace",
        "path": "/memories/user.md",
        "old_str": "Oslo\nCity: Oslo",
        "new_str": "Bergen",
    },
    {"command": "insert", "path": "/memories/user.md", "insert_line": 1, "insert_text": "Pet: beagle"},
    {"command": "insert", "path": "/memories/user.md", "insert_line": 42, "insert_text": "far"},
    {"command": "view", "path": "/memories/user.md", "view_range": [1, 3]},
    {"command": "create", "path": "/memories/todo/today.md", "file_text": "- call Bob\n"},
    {"command": "rename", "old_path": "/memories/todo/today.md", "new_path": "/memories/todo/done.md"},
    {"command": "rename", "old_path": "/memories/todo/done.md", "new_path": "/memories/user.md"},
    {"command": "delete", "path": "/memories/todo"},
    {"command": "delete", "path": "/memories/todo"},
    {"command": "view", "path": "/memories"},
]
BAD = [
    {"command": "view", "path": "/memories/../../etc/passwd"},
    {"command": "create", "path": "/memories/%2e%2e/escape.md", "file_text": "x"},
    {"command": "create", "path": "/memories/huge.md", "file_text": "x" * 300_000},
]


class StubModel:
    """A Messages API that answers each request with the next scripted tool call (then text),
    and records the tool results it was sent."""

    def __init__(self, commands: list[dict], on_reply: Callable[[int], None] | None = None) -> None:
        self.commands, self.on_reply = commands, on_reply
        self.results: list[dict] = []
        stub = self

        class Handler(StubHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                last = body["messages"][-1]
                if isinstance(last["content"], list):
                    stub.results += [part for part in last["content"] if part.get("type") == "tool_result"]
                step = len(stub.results)
                if stub.on_reply:
                    stub.on_reply(step)
                if step < len(stub.commands):
                    content = [
                        {
                            "type": "tool_use",
                            "id": f"toolu_{step:02d}",
                            "name": "memory",
                            "input": stub.commands[step],
                        }
                    ]
                    stop = "tool_use"
                else:
                    content, stop = [{"type": "text", "text": "Noted."}], "end_turn"
                data = json.dumps(
                    {
                        "id": f"msg_{step}",
                        "type": "message",
                        "role": "assistant",
                        "model": "stub",
                        "content": content,
                        "stop_reason": stop,
                        "stop_sequence": None,
                        "usage": {"input_tokens": 1, "output_tokens": 1},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def texts(self) -> list[tuple[str, bool]]:
        def text(content) -> str:
            return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)

        return [(text(r["content"]), bool(r.get("is_error"))) for r in self.results]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def run_loop(commands: list[dict], tool, on_reply=None) -> tuple[list[tuple[str, bool]], object]:
    model = StubModel(commands, on_reply)
    try:
        client = Anthropic(api_key="sk-ant-test", base_url=model.url, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-stub",
            max_tokens=256,
            tools=[tool],
            messages=[{"role": "user", "content": "Remember me."}],
        )
        final = runner.until_done()
        return model.texts(), final
    finally:
        model.close()


def files_of(server, memory_id: str) -> dict[str, str]:
    """What the memory holds: each file's content, read back through the API."""
    headers = {"Authorization": f"Bearer {server.key}"}
    listing = httpx.get(f"{server.url}/v1/memories/{memory_id}/files", headers=headers).json()["data"]
    out = {}
    for item in listing:
        if item["type"] == "file":
            view = httpx.post(
                f"{server.url}/v1/memories/{memory_id}/files/command",
                headers=headers,
                json={"command": "view", "path": item["path"]},
            ).json()["result"]
            out[item["path"]] = "\n".join(line.split("\t", 1)[1] for line in view.split("\n")[1:])
    return out


def test_the_tools_subclass_the_packages_abstract_memory_tools():
    assert issubclass(ThreadlessMemoryTool, BetaAbstractMemoryTool)
    assert issubclass(AsyncThreadlessMemoryTool, BetaAsyncAbstractMemoryTool)
    tool = ThreadlessMemoryTool(Threadless(api_key="tl_proj_x", base_url="http://127.0.0.1:9"), "mem_x")
    assert tool.to_dict() == {"type": "memory_20250818", "name": "memory"}


def test_a_tool_runner_loop_gets_the_reference_backends_texts(live_server_proc, tmp_path):
    memory = Threadless(api_key=live_server_proc.key, base_url=live_server_proc.url)
    memory_id = memory.create().id
    ours, final = run_loop(LOOP, ThreadlessMemoryTool(memory, memory_id))
    reference, _ = run_loop(LOOP, BetaLocalFilesystemMemoryTool(base_path=str(tmp_path)))
    assert final.content[0].text == "Noted."
    assert len(ours) == len(LOOP)
    for step, (got, expected) in enumerate(zip(ours, reference, strict=True)):
        assert got == expected, LOOP[step]
    assert ours[2] == ("File /memories/user.md already exists", True)
    assert ours[3] == (
        "No replacement was performed. Multiple occurrences of old_str `City: Oslo` in lines: 2, 3. "
        "Please ensure it is unique",
        True,
    )
    assert ours[6] == ("Invalid `insert_line` parameter: 42. It should be within the range [0, 3].", True)
    assert files_of(live_server_proc, memory_id) == {
        "/memories/user.md": "Name: Ada\nPet: beagle\nCity: Bergen\n"
    }
    assert (tmp_path / "memories" / "user.md").read_text() == "Name: Ada\nPet: beagle\nCity: Bergen\n"


def test_bad_commands_come_back_as_error_results_and_change_nothing(live_server_proc):
    memory = Threadless(api_key=live_server_proc.key, base_url=live_server_proc.url)
    external = "ant-" + uuid.uuid4().hex
    texts, _ = run_loop(BAD, ThreadlessMemoryTool(memory, external_id=external))
    assert texts[0] == ("Path /memories/../../etc/passwd would escape /memories directory", True)
    assert texts[1] == ("Path /memories/%2e%2e/escape.md would escape /memories directory", True)
    assert texts[2][1] is True and texts[2][0].startswith(
        "File /memories/huge.md would be 300,000 bytes; a memory file can hold at most 262,144 bytes"
    )
    assert memory.files.list(external_id=external) == []


def test_an_outage_mid_loop_is_an_error_result_and_the_agent_keeps_going(stoppable_server, errors):
    memory = Threadless(api_key=stoppable_server.key, base_url=stoppable_server.url, timeout=5)
    memory_id = memory.create().id
    commands = [
        {"command": "create", "path": "/memories/a.md", "file_text": "a\n"},
        {"command": "view", "path": "/memories/a.md"},
        {"command": "insert", "path": "/memories/a.md", "insert_line": 1, "insert_text": "b"},
    ]

    def outage(step: int) -> None:  # the service is down while the model's second command runs
        if step == 1:
            stoppable_server.stop_web()
        elif step == 2:
            stoppable_server.start_web()

    texts, final = run_loop(
        commands, ThreadlessMemoryTool(memory, memory_id, on_error=errors), on_reply=outage
    )
    assert texts[0] == ("File created successfully at: /memories/a.md", False)
    assert texts[1] == (
        "Memory is unavailable right now (Threadless: connection_error). Try again later.",
        True,
    )
    assert texts[2] == ("The file /memories/a.md has been edited.", False)
    assert final.content[0].text == "Noted."
    assert errors.contexts == [{"operation": "memory.view", "memory_id": memory_id}]
    assert files_of(stoppable_server, memory_id) == {"/memories/a.md": "a\nb\n"}


async def test_the_async_tool_runs_in_the_async_tool_runner(live_server_proc, tmp_path):
    memory = AsyncThreadless(api_key=live_server_proc.key, base_url=live_server_proc.url)
    memory_id = (await memory.create()).id
    model = StubModel(LOOP[:6])
    try:
        client = AsyncAnthropic(api_key="sk-ant-test", base_url=model.url, max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-stub",
            max_tokens=256,
            tools=[AsyncThreadlessMemoryTool(memory, memory_id)],
            messages=[{"role": "user", "content": "Remember me."}],
        )
        await runner.until_done()
    finally:
        model.close()
    reference, _ = run_loop(LOOP[:6], BetaLocalFilesystemMemoryTool(base_path=str(tmp_path)))
    assert model.texts() == reference
    await memory.close()
