"""Against a real uvicorn process: streamed turns run on a bounded pool, and the cap on running
end-user turns per agent holds while turns really run."""

from __future__ import annotations

import json

import pytest

from harness.servers import ThreadlessServer
from tests.chat.stubs import Stub

pytestmark = pytest.mark.live

SSE = {"Accept": "text/event-stream"}


@pytest.fixture(scope="module")
def api():
    server = Stub()
    server.set("/slow", json_body={"ok": True}, delay=3.0)
    yield server
    server.close()


@pytest.fixture(scope="module")
def live():
    server = ThreadlessServer(
        env={
            "THREADLESS_EGRESS_ALLOW": "127.0.0.1",
            "THREADLESS_STREAM_WORKERS": "2",
            "THREADLESS_SSE_KEEPALIVE_SECONDS": "0.5",
        }
    ).start()
    yield server
    server.stop()


def slow_agent(live, api, **config) -> dict:
    response = live.client().post(
        "/agents",
        json={
            "name": "slow",
            "config": {
                **config,
                "workflow": [
                    {
                        "id": "api",
                        "type": "http_call",
                        "request": {"url": api.url + "/slow", "timeoutMs": 20000},
                    }
                ],
            },
        },
    )
    assert response.status_code == 201, response.text
    return response.json()


def conversation(client, agent_id: str) -> dict:
    response = client.post(f"/agents/{agent_id}/conversations", json={})
    assert response.status_code == 201, response.text
    return response.json()


def test_streamed_turns_beyond_the_pool_are_503_and_the_pool_frees_up(live, api):
    agent = slow_agent(live, api)
    client = live.client()
    convs = [conversation(client, agent["id"]) for _ in range(4)]
    with (
        client.stream(
            "POST", f"/conversations/{convs[0]['id']}/say", json={"input": "one"}, headers=SSE
        ) as one,
        client.stream(
            "POST", f"/conversations/{convs[1]['id']}/say", json={"input": "two"}, headers=SSE
        ) as two,
    ):
        assert one.status_code == 200 and two.status_code == 200
        refused = client.post(f"/conversations/{convs[2]['id']}/say", json={"input": "three"}, headers=SSE)
        assert refused.status_code == 503, refused.text
        error = refused.json()["error"]
        assert error["code"] == "unavailable" and "(2 per process)" in error["message"]
        assert refused.headers["Retry-After"] == "2"
        assert b"event: done" in one.read() and b"event: done" in two.read()
    # Nothing of the refused say was stored; with the pool free again the next one runs.
    detail = client.get(f"/conversations/{convs[2]['id']}").json()
    assert detail["turns"] == []
    with client.stream(
        "POST", f"/conversations/{convs[3]['id']}/say", json={"input": "four"}, headers=SSE
    ) as four:
        assert four.status_code == 200 and b"event: done" in four.read()


def test_the_cap_on_running_end_user_turns_holds_while_a_turn_really_runs(live, api):
    agent = slow_agent(live, api, limits={"concurrentTurns": 1})
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
    first, second = live.client(pub), live.client(pub)
    mine, theirs = conversation(first, agent["id"]), conversation(second, agent["id"])
    with first.stream(
        "POST",
        f"/conversations/{mine['id']}/say",
        json={"input": "slow"},
        headers={**SSE, "X-Client-Token": mine["clientToken"]},
    ) as running:
        assert running.status_code == 200
        refused = second.post(
            f"/conversations/{theirs['id']}/say",
            json={"input": "me too"},
            headers={"X-Client-Token": theirs["clientToken"]},
        )
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"]["code"] == "rate_limited"
        assert "already running 1 end-user turns" in refused.json()["error"]["message"]
        assert b"event: done" in running.read()
    # After `done` the turn no longer counts: there is room again.
    answer = second.post(
        f"/conversations/{theirs['id']}/say",
        json={"input": "me too"},
        headers={"X-Client-Token": theirs["clientToken"]},
        timeout=30,
    )
    assert answer.status_code == 200 and answer.json()["conversationState"] == "READY"
