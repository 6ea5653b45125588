"""`threadless mcp` (stdio and streamable HTTP) driven by the mcp package's own ClientSession."""

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
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from harness.servers import free_port

pytestmark = pytest.mark.live

THREADLESS = str(Path(sys.executable).parent / "threadless")  # the SDK's console script


def env_for(server) -> dict:
    return {**os.environ, "THREADLESS_API_KEY": server.key, "THREADLESS_BASE_URL": server.url}


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


async def test_the_stdio_server_lists_the_four_tools(live_server_proc):
    async with stdio_session(live_server_proc) as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
    assert names == {"search_memory", "list_facts", "remember", "forget"}


async def test_remember_list_and_forget_a_fact_by_external_id(live_server_proc):
    external = "mcp-" + uuid.uuid4().hex
    async with stdio_session(live_server_proc, "--memory", external) as session:
        assert value(await session.call_tool("list_facts", {})) == []  # reading creates nothing
        stored = value(await session.call_tool("remember", {"text": "The user's dog is called Biscuit."}))
        assert stored["text"] == "The user's dog is called Biscuit." and stored["memory_id"].startswith("mem_")
        facts = value(await session.call_tool("list_facts", {}))
        assert [f["text"] for f in facts] == ["The user's dog is called Biscuit."]
        gone = value(await session.call_tool("forget", {"fact_id": facts[0]["id"]}))
        assert gone == {"deleted": True, "fact_id": facts[0]["id"]}
        assert value(await session.call_tool("list_facts", {})) == []
        whole = value(await session.call_tool("forget", {"whole_memory": True}))
        assert whole == {"deleted": True, "memory_id": stored["memory_id"]}


async def test_search_memory_finds_what_was_said(live_worker_server):
    server = live_worker_server  # the recall index is built by the worker
    with server.client() as api:
        memory_id = api.post("/memories", json={}).json()["id"]
        api.post(f"/memories/{memory_id}/decorate",
                 json={"messages": [{"role": "user", "content": "My beagle Biscuit loves the beach."}]})
        api.post(f"/memories/{memory_id}/report",
                 json={"messages": [{"role": "assistant", "content": "Beaches are great for dogs."}]})
        deadline = time.time() + 60
        while time.time() < deadline and not api.post(f"/memories/{memory_id}/search",
                                                      json={"query": "beagle"}).json()["data"]:
            time.sleep(0.2)
    async with stdio_session(server) as session:
        hits = value(await session.call_tool("search_memory", {"query": "beagle", "memory": memory_id}))
        assert hits and "Biscuit" in hits[0]["snippet"]
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
    proc = subprocess.Popen([THREADLESS, "mcp", "--transport", "http", "--port", str(port)], env=env_for(server),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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


async def test_the_streamable_http_server_answers_the_same_tools(live_server_proc):
    external = "mcp-" + uuid.uuid4().hex
    async with http_server(live_server_proc) as url:
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            assert len((await session.list_tools()).tools) == 4
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
