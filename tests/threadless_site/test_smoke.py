"""The foundation answers: a memory round trip in-process and over a real server."""

import pytest


def test_create_decorate_report_round_trip(cast):
    api = cast.a
    memory = api.post("/v1/memories", {"metadata": {"user": "42"}}, format="json").json()
    assert memory["id"].startswith("mem_")
    answer = api.post(
        f"/v1/memories/{memory['id']}/decorate",
        {"instructions": "Be brief.", "messages": [{"role": "user", "content": "hi"}]},
        format="json",
    )
    assert answer.status_code == 200
    assert answer.json()["messages"] == [{"role": "user", "content": "hi"}]
    report = api.post(
        f"/v1/memories/{memory['id']}/report",
        {"messages": [{"role": "assistant", "content": "hello"}]},
        format="json",
    )
    assert report.status_code == 202
    assert report.json()["accepted"] == 1


@pytest.mark.services
def test_live_server_answers_with_the_printed_key(live_server_proc):
    with live_server_proc.client() as client:
        created = client.post("/memories", json={})
        assert created.status_code == 201
        assert client.get(f"/memories/{created.json()['id']}").json()["counts"]["messages"] == 0
