"""`threadless mcp` (stdio and streamable HTTP) driven by the mcp package's own clients, on the
current protocol (2026-07-28, no handshake) and the previous one (2025-11-25, initialize)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
import uuid
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from starlette.testclient import TestClient
from threadless import cli
from threadless.integrations.mcp_server import build_server, http_app

from harness.servers import free_port

pytestmark = pytest.mark.live

THREADLESS = str(Path(sys.executable).parent / "threadless")  # the SDK's console script
TOKEN = "mcp-test-token-" + uuid.uuid4().hex
TOOLS = {"search_memory", "list_facts", "remember", "forget", "list_notes", "read_note", "write_note"}
ERAS = [("legacy", "2025-11-25"), ("auto", "2026-07-28")]


def env_for(server) -> dict:
    return {
        **os.environ,
        "THREADLESS_API_KEY": server.key,
        "THREADLESS_BASE_URL": server.url,
        "THREADLESS_MCP_TOKEN": TOKEN,
    }


@asynccontextmanager
async def stdio_session(server, *args: str):
    params = StdioServerParameters(command=THREADLESS, args=["mcp", *args], env=env_for(server))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def value(result):
    """A tool's answer: its structured content (a list comes wrapped as {"result": [...]})."""
    data = result.structured_content
    return data["result"] if isinstance(data, dict) and set(data) == {"result"} else data


async def test_the_stdio_server_lists_its_tools_each_with_an_output_schema(live_server_proc):
    async with stdio_session(live_server_proc) as session:
        tools = (await session.list_tools()).tools
    assert {tool.name for tool in tools} == TOOLS
    assert all(tool.output_schema and tool.output_schema.get("type") == "object" for tool in tools)
    read_note = next(tool for tool in tools if tool.name == "read_note")
    assert set(read_note.output_schema["properties"]) == {"path", "content"}


async def notes_round_trip(client: Client, external: str) -> None:
    written = await client.call_tool(
        "write_note", {"path": "prefs.md", "text": "Tea, no sugar.\n", "memory": external}
    )
    assert not written.is_error and written.structured_content["created"] is True
    again = await client.call_tool(
        "write_note", {"path": "/memories/prefs.md", "text": "Coffee.\n", "memory": external}
    )
    assert again.structured_content == {"path": "/memories/prefs.md", "created": False, "memory_id": None}
    read = await client.call_tool("read_note", {"path": "prefs.md", "memory": external})
    assert read.structured_content == {"path": "/memories/prefs.md", "content": "Coffee.\n"}
    notes = value(await client.call_tool("list_notes", {"memory": external}))
    assert [(n["path"], n["version"]) for n in notes] == [("/memories/prefs.md", 2)]
    traversal = await client.call_tool("read_note", {"path": "/memories/../etc/passwd", "memory": external})
    assert traversal.is_error and "would escape /memories directory" in traversal.content[0].text


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_stdio_speaks_both_protocol_versions_with_the_note_tools(live_server_proc, mode, version):
    params = StdioServerParameters(command=THREADLESS, args=["mcp"], env=env_for(live_server_proc))
    async with Client(params, mode=mode) as client:
        assert client.protocol_version == version
        assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
        await notes_round_trip(client, "mcp-" + uuid.uuid4().hex)


async def test_remember_list_and_forget_a_fact_by_external_id(live_server_proc):
    external = "mcp-" + uuid.uuid4().hex
    async with stdio_session(live_server_proc, "--memory", external) as session:
        assert value(await session.call_tool("list_facts", {})) == []  # reading creates nothing
        stored = value(await session.call_tool("remember", {"text": "The user's dog is called Biscuit."}))
        assert stored["text"] == "The user's dog is called Biscuit." and stored["memory_id"].startswith(
            "mem_"
        )
        facts = value(await session.call_tool("list_facts", {}))
        assert [f["text"] for f in facts] == ["The user's dog is called Biscuit."]
        found = value(await session.call_tool("search_memory", {"query": "dog Biscuit"}))
        assert [(h["type"], h["id"], h["text"]) for h in found] == [
            ("fact", facts[0]["id"], facts[0]["text"])
        ]
        later = {"query": "dog", "after": "2999-01-01T00:00:00Z"}
        assert value(await session.call_tool("search_memory", later)) == []
        only_said = value(await session.call_tool("search_memory", {"query": "dog", "include": ["messages"]}))
        assert only_said == []
        gone = value(await session.call_tool("forget", {"fact_id": facts[0]["id"]}))
        assert gone == {"deleted": True, "fact_id": facts[0]["id"]}
        assert value(await session.call_tool("list_facts", {})) == []
        whole = value(await session.call_tool("forget", {"whole_memory": True}))
        assert whole == {"deleted": True, "memory_id": stored["memory_id"]}


async def test_memory_only_keeps_every_tool_to_the_one_memory(live_server_proc):
    mine, other = "mcp-" + uuid.uuid4().hex, "mcp-" + uuid.uuid4().hex
    env = dict(env_for(live_server_proc), THREADLESS_MCP_MEMORY_ONLY="1")
    params = StdioServerParameters(command=THREADLESS, args=["mcp", "--memory", mine], env=env)
    async with Client(params, mode="legacy") as client:
        assert not (await client.call_tool("remember", {"text": "Likes tea."})).is_error
        assert not (await client.call_tool("remember", {"text": "Has a cat.", "memory": mine})).is_error
        refused = await client.call_tool("remember", {"text": "Planted.", "memory": other})
        assert refused.is_error and "kept to the memory" in refused.content[0].text
    with live_server_proc.client() as api:
        assert api.get("/memories", params={"external_id": other}).json()["data"] == []


async def test_memory_only_refuses_another_memory_in_every_tool_before_any_call():
    # Nothing listens at this base URL: a tool that called the service would answer a connection error.
    server = build_server(
        api_key="tl_proj_" + "a" * 40, base_url="http://127.0.0.1:9", memory="user-42", memory_only=True
    )
    calls = {
        "search_memory": {"query": "x"},
        "list_facts": {},
        "remember": {"text": "x"},
        "forget": {"whole_memory": True},
        "list_notes": {},
        "read_note": {"path": "a.md"},
        "write_note": {"path": "a.md", "text": "x"},
    }
    assert set(calls) == TOOLS
    async with Client(server, mode="legacy") as client:
        for name, arguments in calls.items():
            for memory in ("user-43", "mem_someoneelse"):
                result = await client.call_tool(name, {**arguments, "memory": memory})
                assert result.is_error and "kept to the memory 'user-42'" in result.content[0].text, name


def test_memory_only_without_a_memory_does_not_start(monkeypatch, capsys):
    monkeypatch.delenv("THREADLESS_MCP_MEMORY", raising=False)
    assert cli.main(["mcp", "--memory-only"]) == 2
    assert "--memory-only needs --memory" in capsys.readouterr().err


async def test_search_memory_finds_what_was_said_in_every_thread_or_one(live_worker_server):
    server = live_worker_server  # the recall index is built by the worker
    with server.client() as api:
        memory_id = api.post("/memories", json={}).json()["id"]
        for thread, said, reply in (
            ("pets", "My beagle Biscuit loves the beach.", "Beaches are great for dogs."),
            ("trip", "Book a train to Lyon.", "Booked."),
        ):
            api.post(
                f"/memories/{memory_id}/decorate",
                json={"thread": thread, "messages": [{"role": "user", "content": said}]},
            )
            api.post(
                f"/memories/{memory_id}/report",
                json={"thread": thread, "messages": [{"role": "assistant", "content": reply}]},
            )
        deadline = time.time() + 60
        while time.time() < deadline and api.get(f"/memories/{memory_id}").json()["processing"] == "pending":
            time.sleep(0.2)
    async with stdio_session(server) as session:
        found = value(await session.call_tool("search_memory", {"query": "beagle", "memory": memory_id}))
        hits = [h for h in found if h["type"] == "message"]  # facts learned by the worker may rank too
        assert hits and "Biscuit" in hits[0]["snippet"]
        assert hits[0]["thread"] == "pets" and hits[0]["created_at"]
        one_thread = {"query": "beagle", "memory": memory_id, "thread": "trip"}
        in_trip = [
            h for h in value(await session.call_tool("search_memory", one_thread)) if h["type"] == "message"
        ]
        assert "Biscuit" not in str(in_trip) and {h["thread"] for h in in_trip} <= {"trip"}
        missing = await session.call_tool("list_facts", {})
        assert missing.is_error and "memory" in missing.content[0].text  # no default memory set


async def test_two_server_processes_sharing_a_memory_lose_no_write(live_server_proc):
    external = "mcp-" + uuid.uuid4().hex

    async def writer(tag: str) -> None:
        async with stdio_session(live_server_proc, "--memory", external) as session:
            for i in range(5):
                result = await session.call_tool("remember", {"text": f"Fact {tag}{i} about the user."})
                assert not result.is_error

    await asyncio.gather(writer("a"), writer("b"))
    async with stdio_session(live_server_proc, "--memory", external) as session:
        texts = {f["text"] for f in value(await session.call_tool("list_facts", {}))}
    assert texts == {f"Fact {tag}{i} about the user." for tag in "ab" for i in range(5)}


@asynccontextmanager
async def http_server(server):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "threadless", "mcp", "--transport", "http", "--port", str(port)],
        env=env_for(server),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.HTTPError:
                if proc.poll() is not None:
                    raise RuntimeError(proc.stderr.read().decode()) from None
                await asyncio.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def authorized(url: str, token: str = TOKEN):
    return streamable_http_client(
        url, http_client=httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    )


@pytest.mark.parametrize(("mode", "version"), ERAS)
async def test_http_speaks_both_protocol_versions_with_the_note_tools(live_server_proc, mode, version):
    async with http_server(live_server_proc) as url, Client(authorized(url), mode=mode) as client:
        assert client.protocol_version == version
        await notes_round_trip(client, "mcp-" + uuid.uuid4().hex)


async def test_http_without_the_bearer_token_is_401_and_no_tool_runs(live_server_proc):
    external = "mcp-" + uuid.uuid4().hex
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "remember", "arguments": {"text": "Planted by an attacker.", "memory": external}},
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with http_server(live_server_proc) as url:
        for auth in [
            None,
            "Bearer wrong-token-0123456789",
            f"Bearer {TOKEN}x",
            TOKEN,
            f"bearer  {TOKEN}",
            f"Basic {TOKEN}",
        ]:
            sent = dict(headers, **({"Authorization": auth} if auth else {}))
            answer = httpx.post(url, json=call, headers=sent, timeout=10)
            assert answer.status_code == 401 and answer.headers["www-authenticate"].startswith("Bearer"), auth
        with pytest.raises(Exception):  # noqa: B017, PT011 - the real client fails on the 401, whatever it raises
            async with Client(authorized(url, "not-the-token-000000"), mode="legacy") as client:
                await client.call_tool("remember", {"text": "Planted by an attacker.", "memory": external})
        async with Client(authorized(url), mode="legacy") as client:
            assert value(await client.call_tool("list_facts", {"memory": external})) == []


def test_http_refuses_to_start_without_a_token_on_any_host(live_server_proc):
    for host in ["127.0.0.1", "0.0.0.0"]:
        for token in [None, "", "short"]:
            env = env_for(live_server_proc)
            env.pop("THREADLESS_MCP_TOKEN")
            if token is not None:
                env["THREADLESS_MCP_TOKEN"] = token
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "threadless",
                    "mcp",
                    "--transport",
                    "http",
                    "--host",
                    host,
                    "--port",
                    str(free_port()),
                ],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert done.returncode == 2 and "needs THREADLESS_MCP_TOKEN" in done.stderr, (host, token)


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


@pytest.mark.parametrize("bind", ["0.0.0.0", "192.0.2.10", "127.0.0.1", "::"])
def test_http_checks_host_and_origin_on_every_bind_address(bind):
    """DNS rebinding: a page on evil.example whose name now points at the server's address sends
    Host: evil.example and Origin: http://evil.example. Refused on any listening address, not only
    loopback; the names clients use for the server are allowed with --allowed-host."""
    server = build_server(api_key="tl_proj_" + "a" * 40, base_url="http://127.0.0.1:9")
    app = http_app(server, token=TOKEN, host=bind, extra_hosts=["mcp.example.com"])
    headers = {
        "Authorization": f"Bearer {TOKEN}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
    }
    own = f"[{bind}]" if ":" in bind else bind
    with TestClient(app, base_url="http://testserver") as client:

        def status(host: str, origin: str | None = None) -> int:
            sent = dict(headers, Host=host, **({"Origin": origin} if origin else {}))
            return client.post("/mcp", json=INITIALIZE, headers=sent).status_code

        assert status("evil.example:8765") == 421
        assert status("evil.example") == 421
        assert status("mcp.example.com", origin="http://evil.example:8765") == 403
        assert status("mcp.example.com") == 200
        assert status("mcp.example.com:443", origin="https://mcp.example.com") == 200
        assert status(f"{own}:8765") == 200
        assert status("127.0.0.1:8765") == (421 if bind == "192.0.2.10" else 200)


def test_the_allowed_hosts_come_from_the_flag_and_the_environment(monkeypatch):
    monkeypatch.setenv("THREADLESS_MCP_ALLOWED_HOSTS", "a.example, b.example")
    monkeypatch.setenv("THREADLESS_MCP_MEMORY_ONLY", "true")
    args = cli._parser().parse_args(["mcp", "--allowed-host", "c.example", "--memory", "m"])
    assert args.allowed_host == ["a.example", "b.example", "c.example"] and args.memory_only


async def test_the_streamable_http_server_answers_the_same_tools(live_server_proc):
    external = "mcp-" + uuid.uuid4().hex
    async with http_server(live_server_proc) as url:
        async with authorized(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            assert len((await session.list_tools()).tools) == len(TOOLS)
            await session.call_tool("remember", {"text": "Prefers tea.", "memory": external})
            facts = value(await session.call_tool("list_facts", {"memory": external}))
    assert [f["text"] for f in facts] == ["Prefers tea."]


async def test_with_the_service_down_a_tool_answers_an_error_result_not_a_crash(stoppable_server):
    external = "mcp-" + uuid.uuid4().hex
    async with stdio_session(stoppable_server, "--memory", external, "--timeout", "2") as session:
        await session.call_tool("remember", {"text": "Likes jazz."})
        with stoppable_server.down():
            result = await session.call_tool("list_facts", {})
            assert result.is_error
            assert "could not answer (connection_error)" in result.content[0].text
        facts = value(await session.call_tool("list_facts", {}))  # the same process, after the outage
    assert [f["text"] for f in facts] == ["Likes jazz."]
