"""Against a real uvicorn process: SSE say and replay, 409 on a concurrent say, SIGTERM mid-turn."""

from __future__ import annotations

import json
import signal
import threading
import time

import httpx
import pytest

from harness.servers import ThreadlessServer
from tests.chat.stubs import Stub

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def live():
    server = ThreadlessServer(
        env={"THREADLESS_EGRESS_ALLOW": "127.0.0.1", "THREADLESS_SSE_KEEPALIVE_SECONDS": "0.5"}
    ).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def api():
    server = Stub()
    yield server
    server.close()


def sse_events(response: httpx.Response) -> list[dict]:
    events, current = [], {}
    for line in response.iter_lines():
        if not line:
            if "event" in current:
                events.append(current)
            current = {}
        elif line.startswith("id: "):
            current["id"] = int(line[4:])
        elif line.startswith("event: "):
            current["event"] = line[7:]
        elif line.startswith("data: "):
            current["data"] = json.loads(line[6:])
    return events


def new_agent(client: httpx.Client, config: dict) -> str:
    response = client.post("/agents", json={"name": "live agent", "config": config})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def new_conversation(client: httpx.Client, agent_id: str, **headers) -> dict:
    response = client.post(f"/agents/{agent_id}/conversations", json={}, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()


def test_sse_say_streams_events_in_order_and_the_replay_matches(live):
    client = live.client()
    conv = new_conversation(client, live.demo["agent_id"])
    with client.stream(
        "POST",
        f"/conversations/{conv['id']}/say",
        json={"input": "Hi there"},
        headers={"Accept": "text/event-stream"},
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = sse_events(response)
    names = [e["event"] for e in events]
    assert names[:2] == ["turn_start", "task_start"] and names[-3:] == ["task_end", "output", "done"]
    assert set(names[2:-3]) == {"token"} and len(names) > 6
    assert [e["id"] for e in events] == list(range(1, len(events) + 1))
    snapshot = events[-1]["data"]["snapshot"]
    assert snapshot["conversationState"] == "READY"
    assert (
        "".join(e["data"]["text"] for e in events if e["event"] == "token") == snapshot["output"][0]["text"]
    )
    with client.stream("GET", f"/conversations/{conv['id']}/turns/1/events") as replay:
        assert sse_events(replay) == events
    with client.stream(
        "GET", f"/conversations/{conv['id']}/turns/1/events", headers={"Last-Event-ID": "3"}
    ) as replay:
        assert [e["id"] for e in sse_events(replay)] == list(range(4, len(events) + 1))


def test_sse_say_failures_carry_the_text_for_project_keys_and_nothing_for_end_users(live, api):
    api.set(
        "/v1/chat/completions",
        status=400,
        json_body={"error": {"message": "`temperature` is deprecated for this model."}},
    )
    client = live.client()
    agent = client.post(
        "/agents",
        json={
            "name": "live agent",
            "config": {
                "memoryPolicy": {"strictWriteDiscipline": {"enabled": True}},
                "workflow": [
                    {
                        "id": "eddi://ai.labs.llm",
                        "type": "llm",
                        "provider": "openai",
                        "model": "o1",
                        "baseUrl": api.url + "/v1",
                        "params": {"temperature": 0.3},
                    }
                ],
            },
        },
    ).json()
    agent_id = agent["id"]
    conv = new_conversation(client, agent_id)
    with client.stream(
        "POST",
        f"/conversations/{conv['id']}/say",
        json={"input": "hi"},
        headers={"Accept": "text/event-stream"},
    ) as response:
        events = sse_events(response)
    text = (
        "Task 'eddi://ai.labs.llm' failed: Streaming chat failed: `temperature` is deprecated for this model."
    )
    assert [e["event"] for e in events] == ["turn_start", "task_start", "task_failed", "output", "done"]
    assert events[2]["data"]["error"] == text and events[2]["data"]["errorType"] == "provider"
    assert events[-1]["data"]["snapshot"]["taskErrors"][0]["text"] == text
    pub = json.loads(
        live.manage(
            "create_key",
            "--project",
            live.demo["project_id"],
            "--kind",
            "publishable",
            "--agent",
            agent["slug"],
            "--json",
        )
        .strip()
        .splitlines()[-1]
    )["key"]
    end_user = live.client(pub)
    mine = new_conversation(end_user, agent_id)
    token = {"X-Client-Token": mine["clientToken"]}
    with end_user.stream(
        "POST",
        f"/conversations/{mine['id']}/say",
        json={"input": "hi"},
        headers={"Accept": "text/event-stream", **token},
    ) as response:
        raw = response.read().decode()
    assert "temperature" not in raw and "Streaming chat" not in raw
    assert '"error":"Something went wrong"' in raw
    with httpx.stream(
        "GET",
        f"{live.url}/v1/conversations/{mine['id']}/turns/1/events",
        params={"key": pub, "client_token": mine["clientToken"]},
    ) as replay:
        raw = replay.read().decode()
    assert "event: done" in raw and "temperature" not in raw


def test_a_second_say_while_a_turn_runs_is_409_and_the_events_route_follows_live(live, api):
    api.set("/slow", json_body={"temp": 5}, delay=2.0)
    client = live.client()
    agent_id = new_agent(
        client,
        {
            "workflow": [
                {
                    "id": "weather",
                    "type": "http_call",
                    "request": {"url": api.url + "/slow", "timeoutMs": 10000},
                },
                {"id": "llm", "type": "llm", "provider": "demo"},
            ]
        },
    )
    conv = new_conversation(client, agent_id)
    first: dict = {}
    thread = threading.Thread(
        target=lambda: first.update(
            client.post(f"/conversations/{conv['id']}/say", json={"input": "one"}).json()
        )
    )
    thread.start()
    deadline = time.time() + 20
    while time.time() < deadline and not any(r.path == "/slow" for r in api.requests):
        time.sleep(0.05)
    second = client.post(f"/conversations/{conv['id']}/say", json={"input": "two"})
    assert second.status_code == 409 and second.json()["error"]["code"] == "conflict"
    assert client.get(f"/conversations/{conv['id']}").json()["conversationState"] == "IN_PROGRESS"
    with client.stream("GET", f"/conversations/{conv['id']}/turns/1/events") as live_events:
        events = sse_events(live_events)
    thread.join(30)
    assert [e["event"] for e in events][:2] == ["turn_start", "task_start"] and events[-1]["event"] == "done"
    assert first["conversationState"] == "READY" and events[-1]["data"]["snapshot"] == first
    assert client.post(f"/conversations/{conv['id']}/say", json={"input": "three"}).json()["turn"] == 2


def test_a_client_that_disconnects_cancels_nothing_and_quiet_streams_get_keepalives(live, api):
    api.set("/slow", json_body={"temp": 5}, delay=2.0)
    client = live.client()
    agent_id = new_agent(
        client,
        {
            "workflow": [
                {
                    "id": "weather",
                    "type": "http_call",
                    "request": {"url": api.url + "/slow", "timeoutMs": 10000},
                },
                {"id": "llm", "type": "llm", "provider": "demo"},
            ]
        },
    )
    conv = new_conversation(client, agent_id)
    with client.stream(
        "POST",
        f"/conversations/{conv['id']}/say",
        json={"input": "bye"},
        headers={"Accept": "text/event-stream"},
    ) as response:
        seen = ""
        for chunk in response.iter_text():
            seen += chunk
            if ": keepalive" in seen:
                break  # the client goes away mid-turn
    assert "event: turn_start" in seen
    deadline = time.time() + 30
    while time.time() < deadline:
        detail = client.get(f"/conversations/{conv['id']}").json()
        if detail["conversationState"] != "IN_PROGRESS":
            break
        time.sleep(0.2)
    assert detail["conversationState"] == "READY"
    assert detail["turns"][0]["output"][0]["text"].startswith("[demo model]")


def test_sigterm_mid_turn_interrupts_at_the_task_boundary_and_rerun_recovers(live, api):
    api.set("/slow", json_body={"temp": 5}, delay=2.0)
    client = live.client()
    agent_id = new_agent(
        client,
        {
            "memoryPolicy": {"strictWriteDiscipline": {"enabled": True}},
            "workflow": [
                {
                    "id": "weather",
                    "type": "http_call",
                    "storeAs": "weather",
                    "request": {"url": api.url + "/slow", "timeoutMs": 10000},
                },
                {"id": "llm", "type": "llm", "provider": "demo"},
            ],
        },
    )
    conv = new_conversation(client, agent_id)
    api.requests.clear()
    answer: dict = {}
    thread = threading.Thread(
        target=lambda: answer.update(
            client.post(f"/conversations/{conv['id']}/say", json={"input": "weather?"}).json()
        )
    )
    thread.start()
    deadline = time.time() + 20
    while time.time() < deadline and not api.requests:
        time.sleep(0.05)
    live.stop_web(signal.SIGTERM)
    thread.join(30)
    assert answer["conversationState"] == "EXECUTION_INTERRUPTED" and answer["output"] == []
    live.start_web()
    client = live.client()
    detail = client.get(f"/conversations/{conv['id']}").json()
    assert detail["conversationState"] == "EXECUTION_INTERRUPTED"
    entries = client.get(
        f"/memories/{conv['memoryId']}/entries", params={"include_uncommitted": "true"}
    ).json()["data"]
    assert [(e["kind"], e["role"], e["committed"]) for e in entries] == [
        ("message", "user", True),
        ("data", None, False),
    ]  # nothing half-written stays committed
    api.set("/slow", json_body={"temp": 5})
    again = client.post(f"/conversations/{conv['id']}/rerun", json={})
    assert again.status_code == 200 and again.json()["conversationState"] == "READY"
    assert again.json()["turn"] == 1
