"""The /v1 agents and conversations API: access set, validation paths, publishable keys, CORS."""

from __future__ import annotations

import json

import pytest

from chat.models import Agent
from tests.chat.conftest import policy
from tests.chat.stubs import refused_url

pytestmark = pytest.mark.django_db

SEED_RULES = {
    "behaviorRules": [
        {
            "name": "Handle Weather Failure",
            "actions": ["fallback_response"],
            "conditions": [
                {"type": "actionmatcher", "configs": {"actions": "task_failed_ai.labs.httpcalls"}}
            ],
        }
    ]
}
SEED_OUTPUT = {
    "outputSet": [
        {
            "action": "task_failed_ai.labs.llm",
            "outputs": [
                {
                    "valueAlternatives": [
                        {"type": "text", "text": "Sorry — I can't answer right now. Please try again."}
                    ]
                }
            ],
        }
    ]
}
SEED_POLICY = {
    "memoryPolicy": {
        "strictWriteDiscipline": {"enabled": True, "onFailure": "digest", "continueOnFailure": True}
    }
}
DEMO = {"workflow": [{"id": "llm", "type": "llm", "provider": "demo"}]}


def failing_config(mode: str | None = "digest") -> dict:
    return {
        **policy(mode),
        "workflow": [
            {"id": "weather", "type": "http_call", "request": {"method": "GET", "url": refused_url() + "/f"}}
        ],
    }


def post(client, path, body, **headers):
    return client.post("/v1" + path, data=json.dumps(body), content_type="application/json", **headers)


def create_agent(client, config=DEMO, name="Helper", **extra):
    response = post(client, "/agents", {"name": name, "config": config, **extra})
    assert response.status_code == 201, response.content
    return response.json()


# --- agents ------------------------------------------------------------------------------------


def test_agents_crud_and_the_access_set(cast):
    agent = create_agent(cast.a, name="Weather Helper")
    assert agent["slug"] == "weather-helper" and agent["id"].startswith("agt_")
    assert set(agent) == {"id", "slug", "name", "config", "created_at", "updated_at"}
    assert cast.a.get(f"/v1/agents/{agent['id']}").json()["name"] == "Weather Helper"
    assert cast.a.get("/v1/agents").json()["data"][0]["id"] == agent["id"]
    assert cast.b.get(f"/v1/agents/{agent['id']}").status_code == 404
    assert cast.api().get("/v1/agents").status_code == 401
    updated = cast.a.put(
        f"/v1/agents/{agent['id']}",
        data=json.dumps({"name": "Renamed", "config": DEMO}),
        content_type="application/json",
    )
    assert updated.status_code == 200 and updated.json()["name"] == "Renamed"
    assert cast.a.delete(f"/v1/agents/{agent['id']}").status_code == 204
    assert cast.a.get(f"/v1/agents/{agent['id']}").status_code == 404


def test_slugs_are_unique_across_the_installation(cast):
    create_agent(cast.a, name="Support")
    other = create_agent(cast.b, name="Support")
    assert other["slug"] == "support-2"
    response = post(cast.b, "/agents", {"name": "x", "config": DEMO, "slug": "support"})
    assert response.status_code == 400 and response.json()["error"]["message"].startswith("slug:")


@pytest.mark.parametrize(
    "config,path",
    [
        (
            {
                "workflow": [
                    {"id": "a", "type": "llm", "provider": "demo"},
                    {"id": "b", "type": "behavior_rules", "behaviorRules": []},
                    {"id": "c", "type": "http_call", "request": {"url": "ftp://x"}},
                ]
            },
            "workflow[2].request.url",
        ),
        ({"workflow": [{"id": "a", "type": "nope"}]}, "workflow[0].type"),
        (
            {
                "workflow": [
                    {"id": "a", "type": "llm", "provider": "openai", "model": "m", "apiKey": "sk-123"}
                ]
            },
            "workflow[0].apiKey",
        ),
        (
            {
                "workflow": [
                    {"id": "a", "type": "llm", "provider": "openai", "model": "m", "apiKeyEnv": "SECRET_KEY"}
                ]
            },
            "workflow[0].apiKeyEnv",
        ),
        (
            {**DEMO, "memoryPolicy": {"strictWriteDiscipline": {"onFailure": "explode"}}},
            "memoryPolicy.strictWriteDiscipline.onFailure",
        ),
        (
            {
                **DEMO,
                "behaviorRules": [
                    {
                        "name": "r",
                        "actions": ["x"],
                        "conditions": [
                            {"type": "actionmatcher", "configs": {"actions": "a", "occurrence": "sometimes"}}
                        ],
                    }
                ],
            },
            "behaviorRules[0].conditions[0].configs.occurrence",
        ),
        (
            {**DEMO, "outputSet": [{"action": "a", "outputs": [{"valueAlternatives": [{"type": "text"}]}]}]},
            "outputSet[0].outputs[0].valueAlternatives[0].text",
        ),
        ({**DEMO, "surprise": 1}, "surprise"),
    ],
)
def test_invalid_configs_are_400_naming_the_json_path(cast, config, path):
    response = post(cast.a, "/agents", {"name": "x", "config": config})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and error["message"].startswith(path + ":"), error["message"]
    assert "sk-123" not in response.content.decode()


def test_the_seed_json_examples_validate_unchanged(cast):
    create_agent(cast.a, {**SEED_POLICY, **SEED_RULES, **SEED_OUTPUT, **DEMO}, name="seed")


def test_a_publishable_key_cannot_use_project_routes(cast, make_agent, publishable):
    key = publishable(make_agent(DEMO))
    assert cast.api(key).get("/v1/agents").status_code == 401
    assert cast.api(key).get("/v1/memories").status_code == 401


# --- conversations -----------------------------------------------------------------------------


def test_say_answers_a_turn_snapshot_and_the_conversation_lists_turns(cast):
    agent = create_agent(cast.a)
    conv = post(cast.a, f"/agents/{agent['id']}/conversations", {}).json()
    assert (
        set(conv) == {"id", "agentId", "memoryId", "thread", "conversationState"}
        and conv["conversationState"] == "READY"
        and conv["thread"] == "default"
    )
    snap = post(cast.a, f"/conversations/{conv['id']}/say", {"input": "Hello!"}).json()
    assert set(snap) == {"conversationId", "turn", "conversationState", "output", "actions", "taskErrors"}
    assert snap["turn"] == 1 and snap["conversationState"] == "READY"
    assert snap["output"][0]["text"].startswith("[demo model] You said: \u201cHello!\u201d")
    detail = cast.a.get(f"/v1/conversations/{conv['id']}").json()
    assert detail["turns"] == [snap]
    assert cast.b.get(f"/v1/conversations/{conv['id']}").status_code == 404
    assert (
        post(cast.a, f"/conversations/{conv['id']}/say", {"text": "x"}).json()["error"]["message"]
        == "text: unknown field."
    )
    assert post(cast.a, f"/conversations/{conv['id']}/say", {"input": ""}).status_code == 400
    bad = cast.a.post(f"/v1/conversations/{conv['id']}/say", data="{nope", content_type="application/json")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_request"
    assert cast.api().post(f"/v1/conversations/{conv['id']}/say").status_code == 401


def test_rerun_is_409_when_nothing_to_retry_and_retries_a_failed_turn(cast, stub):
    stub.set("/flaky", status=503, json_body={"error": "busy"})
    config = {
        **policy("digest"),
        "workflow": [{"id": "weather", "type": "http_call", "request": {"url": stub.url + "/flaky"}}],
    }
    agent = create_agent(cast.a, config)
    conv = post(cast.a, f"/agents/{agent['id']}/conversations", {}).json()
    response = post(cast.a, f"/conversations/{conv['id']}/rerun", {})
    assert response.status_code == 409 and response.json()["error"]["code"] == "conflict"
    snap = post(cast.a, f"/conversations/{conv['id']}/say", {"input": "weather?"}).json()
    assert snap["conversationState"] == "ERROR"
    assert (
        snap["taskErrors"][0]["text"]
        == f"Task 'weather' failed: API call to 127.0.0.1:{stub.port} failed: HTTP 503: busy"
    )
    stub.set("/flaky", json_body={"temp": 20})
    again = post(cast.a, f"/conversations/{conv['id']}/rerun", {}).json()
    assert again["turn"] == 1 and again["conversationState"] == "READY" and again["taskErrors"] == []
    assert post(cast.a, f"/conversations/{conv['id']}/rerun", {}).status_code == 409
    turns = cast.a.get(f"/v1/conversations/{conv['id']}").json()["turns"]
    assert len(turns) == 1
    memory = cast.a.get(f"/v1/memories/{conv['memoryId']}/entries?include_uncommitted=true").json()["data"]
    assert [e["content"] for e in memory if e["role"] == "user"] == [
        "weather?"
    ]  # the input is not stored again


def test_a_publishable_key_never_receives_provider_text(cast, stub):
    stub.set("/v1/chat/completions", status=404, json_body={"error": {"message": "model 'x' not found"}})
    config = {
        **policy("digest"),
        "workflow": [
            {
                "id": "eddi://ai.labs.llm",
                "type": "llm",
                "provider": "openai",
                "model": "x",
                "baseUrl": stub.url + "/v1",
            }
        ],
    }
    agent = create_agent(cast.a, config)
    from projects.services import key_create

    _k, pub = key_create(project=cast.project_a, kind="publishable", agent_id=agent["id"])
    client = cast.api(pub)
    conv = post(client, f"/agents/{agent['id']}/conversations", {}).json()
    token = conv["clientToken"]
    headers = {"HTTP_X_CLIENT_TOKEN": token}
    response = post(client, f"/conversations/{conv['id']}/say", {"input": "hi"}, **headers)
    snap = response.json()
    assert snap["conversationState"] == "ERROR"
    assert snap["taskErrors"] == [{"type": "error", "message": "Something went wrong"}]
    detail = client.get(f"/v1/conversations/{conv['id']}", **headers)
    events = client.get(f"/v1/conversations/{conv['id']}/turns/1/events", **headers)
    body = b"".join(events)
    for text in (response.content, detail.content, body):
        assert b"not found" not in text and b"Chat model" not in text
    assert b"event: task_failed" in body and b'"error":"Something went wrong"' in body
    # The project key sees the real text for the same turn.
    project_view = cast.a.get(f"/v1/conversations/{conv['id']}").json()["turns"][0]["taskErrors"][0]["text"]
    assert (
        project_view == "Task 'eddi://ai.labs.llm' failed: Chat model execution failed: model 'x' not found"
    )


def test_client_tokens_separate_end_users_and_are_checked_before_state(cast, make_agent, publishable):
    agent = make_agent(DEMO)
    pub = publishable(agent)
    client = cast.api(pub)
    conv = post(client, f"/agents/{agent.id}/conversations", {}).json()
    assert client.get(f"/v1/conversations/{conv['id']}").status_code == 404
    assert client.get(f"/v1/conversations/{conv['id']}", HTTP_X_CLIENT_TOKEN="wrong").status_code == 404
    assert post(client, f"/conversations/{conv['id']}/rerun", {}).status_code == 404  # not 409
    assert (
        client.get(f"/v1/conversations/{conv['id']}", HTTP_X_CLIENT_TOKEN=conv["clientToken"]).status_code
        == 200
    )
    # A project-key conversation is not reachable with a publishable key.
    owned = post(cast.a, f"/agents/{agent.id}/conversations", {}).json()
    assert "clientToken" not in owned
    assert client.get(f"/v1/conversations/{owned['id']}").status_code == 404
    # Another agent's publishable key cannot start conversations on this agent.
    other = publishable(make_agent(DEMO, name="Other"))
    assert post(cast.api(other), f"/agents/{agent.id}/conversations", {}).status_code == 404


def test_the_events_route_takes_only_a_publishable_key_in_the_query(cast, make_agent, publishable):
    agent = make_agent(DEMO)
    conv = post(cast.a, f"/agents/{agent.id}/conversations", {}).json()
    post(cast.a, f"/conversations/{conv['id']}/say", {"input": "hi"})
    response = cast.api().get(f"/v1/conversations/{conv['id']}/turns/1/events?key={cast.key_a}")
    assert response.status_code == 401
    pub = publishable(agent)
    mine = post(cast.api(pub), f"/agents/{agent.id}/conversations", {}).json()
    post(
        cast.api(pub),
        f"/conversations/{mine['id']}/say",
        {"input": "hi"},
        HTTP_X_CLIENT_TOKEN=mine["clientToken"],
    )
    response = cast.api().get(
        f"/v1/conversations/{mine['id']}/turns/1/events?key={pub}&client_token={mine['clientToken']}",
        HTTP_LAST_EVENT_ID="3",
    )
    assert response.status_code == 200 and response["Content-Type"] == "text/event-stream"
    body = b"".join(response).decode()
    ids = [int(line[4:]) for line in body.splitlines() if line.startswith("id: ")]
    assert ids and ids[0] == 4 and body.rstrip().splitlines()[-2] == "event: done"


def test_cors_echoes_only_the_agents_allowed_origins(cast, make_agent):
    agent = make_agent({**DEMO, "allowedOrigins": ["https://shop.example"]})
    pre = cast.api().options(
        f"/v1/agents/{agent.id}/conversations",
        HTTP_ORIGIN="https://shop.example",
        HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
    )
    assert pre.status_code == 204 and pre["Access-Control-Allow-Origin"] == "https://shop.example"
    assert "X-Client-Token" in pre["Access-Control-Allow-Headers"]
    assert "Last-Event-ID" in pre["Access-Control-Allow-Headers"]
    evil = cast.api().options(f"/v1/agents/{agent.id}/conversations", HTTP_ORIGIN="https://evil.example")
    assert "Access-Control-Allow-Origin" not in evil
    conv = post(cast.a, f"/agents/{agent.id}/conversations", {}, HTTP_ORIGIN="https://shop.example")
    assert conv["Access-Control-Allow-Origin"] == "https://shop.example"


def test_agent_delete_removes_its_conversations_and_revokes_its_keys(cast, make_agent, publishable):
    agent = make_agent(DEMO)
    pub = publishable(agent)
    conv = post(cast.a, f"/agents/{agent.id}/conversations", {}).json()
    cast.a.delete(f"/v1/agents/{agent.id}")
    assert not Agent.objects.filter(pk=agent.id).exists()
    assert cast.a.get(f"/v1/memories/{conv['memoryId']}").status_code == 404
    assert cast.api(pub).get(f"/v1/conversations/{conv['id']}").status_code == 401


def test_the_openapi_schema_lists_the_agent_and_conversation_routes(cast):
    schema = cast.api().get("/v1/openapi.json").json()
    assert {"get", "post"} <= set(schema["paths"]["/v1/agents"])
    assert {"get", "put", "delete"} <= set(schema["paths"]["/v1/agents/{agent_id}"])
    assert {"get", "delete"} <= set(schema["paths"]["/v1/conversations/{conversation_id}"])
    say = schema["paths"]["/v1/conversations/{conversation_id}/say"]["post"]
    assert {"200", "400", "401", "404", "409", "429"} <= set(say["responses"])
    assert "text/event-stream" in say["responses"]["200"]["content"]
    assert "/v1/conversations/{conversation_id}/turns/{number}/events" in schema["paths"]


# --- a subject's conversations: threads of its memory -------------------------------------------


def llm_config(stub) -> dict:
    reply = {"choices": [{"message": {"role": "assistant", "content": "Ok."}}]}
    stub.set("/v1/chat/completions", json_body=reply)
    llm = {"id": "llm", "type": "llm", "provider": "openai", "model": "x", "baseUrl": stub.url + "/v1"}
    return {"workflow": [llm]}


def subject_conversations(cast, agent_id: str, external_id: str = "user-42") -> list[dict]:
    """Two conversations of one subject (its memory: the external id's)."""
    body = {"external_id": external_id}
    return [post(cast.a, f"/agents/{agent_id}/conversations", body).json() for _ in range(2)]


def say_and_process(cast, capture, conversation: dict, text: str) -> None:
    """Say, then run the turn's background work (facts, recall) as the worker would once it commits."""
    with capture(execute=True):
        assert post(cast.a, f"/conversations/{conversation['id']}/say", {"input": text}).status_code == 200


def test_a_subjects_conversations_share_its_facts_and_keep_their_own_windows(
    cast, stub, eager_celery, django_capture_on_commit_callbacks
):
    agent = create_agent(cast.a, llm_config(stub))
    first, second = subject_conversations(cast, agent["id"])
    assert first["memoryId"] == second["memoryId"]
    assert (first["thread"], second["thread"]) == (first["id"], second["id"])
    memory = cast.a.get(f"/v1/memories/{first['memoryId']}").json()
    assert memory["external_id"] == "user-42"
    say_and_process(cast, django_capture_on_commit_callbacks, first, "My dog is called Biscuit.")
    stub.requests.clear()
    snap = post(cast.a, f"/conversations/{second['id']}/say", {"input": "What is my dog called?"}).json()
    assert snap["turn"] == 1 and snap["conversationState"] == "READY"
    sent = stub.requests[-1].json["messages"]
    system = "\n".join(m["content"] for m in sent if m["role"] == "system")
    assert "What you know" in system and "User has a dog named Biscuit" in system
    assert [m["content"] for m in sent if m["role"] != "system"] == ["What is my dog called?"]
    post(cast.a, f"/conversations/{first['id']}/say", {"input": "And my cat?"})
    window = [m["content"] for m in stub.requests[-1].json["messages"] if m["role"] != "system"]
    assert window == ["My dog is called Biscuit.", "Ok.", "And my cat?"]
    detail = cast.a.get(f"/v1/conversations/{second['id']}").json()
    assert (detail["memoryId"], detail["thread"], len(detail["turns"])) == (memory["id"], second["id"], 1)
    # Another project neither sees the conversation nor can start one on this agent.
    assert cast.b.get(f"/v1/conversations/{second['id']}").status_code == 404
    other = post(cast.b, f"/agents/{agent['id']}/conversations", {"external_id": "user-42"})
    assert other.status_code == 404


def test_a_publishable_key_cannot_choose_a_subject(cast, make_agent, publishable):
    agent = make_agent(DEMO)
    client = cast.api(publishable(agent))
    refused = post(client, f"/agents/{agent.id}/conversations", {"external_id": "user-42"})
    assert refused.status_code == 400
    assert refused.json()["error"]["message"].startswith("external_id: a publishable key cannot choose")
    own = post(client, f"/agents/{agent.id}/conversations", {}).json()
    assert own["thread"] == "default"
    token = own["clientToken"]
    assert client.delete(f"/v1/conversations/{own['id']}", HTTP_X_CLIENT_TOKEN=token).status_code == 401
    assert cast.a.get("/v1/memories?external_id=user-42").json()["data"] == []


def test_deleting_a_subjects_conversation_deletes_only_its_thread(
    cast, stub, eager_celery, django_capture_on_commit_callbacks
):
    agent = create_agent(cast.a, llm_config(stub))
    first, second = subject_conversations(cast, agent["id"])
    for text in ("My dog is called Biscuit.", "I live in Oslo."):
        say_and_process(cast, django_capture_on_commit_callbacks, first, text)
    say_and_process(cast, django_capture_on_commit_callbacks, second, "My dog is called Biscuit.")
    mem = f"/v1/memories/{first['memoryId']}"
    assert cast.b.delete(f"/v1/conversations/{first['id']}").status_code == 404
    response = cast.a.delete(f"/v1/conversations/{first['id']}")
    assert response.status_code == 200, response.content
    receipt = response.json()["deleted"]
    assert (receipt["conversations"], receipt["threads"], receipt["turns"], receipt["facts"]) == (1, 1, 2, 1)
    assert cast.a.get(f"/v1/conversations/{first['id']}").status_code == 404
    assert cast.a.get(f"{mem}/threads/{first['id']}").status_code == 404
    assert cast.a.get(f"{mem}/threads/{second['id']}").json()["turns"] == 1
    facts = [f["text"] for f in cast.a.get(f"{mem}/facts").json()["data"]]
    assert facts == ["User has a dog named Biscuit"]  # taught in both; Oslo only in the deleted one
    # Deleting a conversation's thread through the memory deletes the conversation too.
    third = post(cast.a, f"/agents/{agent['id']}/conversations", {"external_id": "user-42"}).json()
    post(cast.a, f"/conversations/{third['id']}/say", {"input": "Hello"})
    assert cast.a.delete(f"{mem}/threads/{third['id']}").status_code == 200
    assert cast.a.get(f"/v1/conversations/{third['id']}").status_code == 404
    # The agent goes with its conversations, the subject's memory stays.
    assert cast.a.delete(f"/v1/agents/{agent['id']}").status_code == 204
    assert cast.a.get(f"{mem}/threads/{second['id']}").status_code == 404
    assert [f["text"] for f in cast.a.get(f"{mem}/facts").json()["data"]] == []
    assert cast.a.get(mem).status_code == 200
