"""Written as the attack: a stranger holding an agent's publishable key
(public by design) tries to farm the tenant's model budget and to lock the real end users out."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest

from chat import limits, runner, turnpool
from chat.models import Conversation
from memories.models import Entry, Memory
from projects import ratelimit

pytestmark = pytest.mark.django_db

DEMO = {"workflow": [{"id": "llm", "type": "llm", "provider": "demo"}]}
STRANGER = "203.0.113.66"
REAL_USER = "198.51.100.7"


@pytest.fixture(autouse=True)
def _generous_defaults(settings):
    # Each test narrows the one limit it attacks; the others stay out of the way.
    settings.THREADLESS_RATE_LIMIT_PER_MINUTE = 10_000
    settings.THREADLESS_END_USER_RATE_PER_IP_PER_MINUTE = 1000
    settings.THREADLESS_END_USER_RATE_PER_CONVERSATION_PER_MINUTE = 1000
    settings.THREADLESS_END_USER_CONCURRENT_TURNS = 100
    settings.THREADLESS_END_USER_TURNS_PER_DAY = 10_000


@pytest.fixture(autouse=True)
def _one_rate_window(monkeypatch):
    # The buckets count per wall-clock minute; a test's requests take a second or two and would
    # see two windows when they straddle a minute's end. Held in the middle of this minute.
    held = time.time() // 60 * 60 + 30
    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: held))


class EndUser:
    """A browser with the agent's publishable key, from one address."""

    def __init__(self, cast, key: str, agent_id: str, address: str):
        self.client, self.agent_id, self.address = cast.api(key), agent_id, address
        self.token = ""

    def post(self, path: str, body: dict, **headers):
        return self.client.post(
            "/v1" + path,
            data=json.dumps(body),
            content_type="application/json",
            REMOTE_ADDR=self.address,
            HTTP_X_CLIENT_TOKEN=self.token,
            **headers,
        )

    def start(self) -> dict:
        response = self.post(f"/agents/{self.agent_id}/conversations", {})
        assert response.status_code == 201, response.content
        conv = response.json()
        self.token = conv["clientToken"]
        return conv

    def say(self, conv: dict, text: str = "hello", **headers):
        return self.post(f"/conversations/{conv['id']}/say", {"input": text}, **headers)


def error_of(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {
        "code",
        "message",
        "hint",
        "request_id",
        "retryable",
    }
    assert body["error"]["code"] == code
    return body["error"]


def user_inputs(conversation_id: str) -> list[str]:
    memory = Conversation.objects.get(pk=conversation_id).memory
    return list(
        Entry.objects.filter(memory=memory, kind="message", role="user").values_list("content", flat=True)
    )


@pytest.fixture
def agent(make_agent):
    return make_agent(DEMO)


@pytest.fixture
def users(cast, agent, publishable):
    key = publishable(agent)
    return lambda address: EndUser(cast, key, agent.id, address)


# --- per-address and per-conversation buckets --------------------------------------------------


def test_a_stranger_hammering_from_one_address_gets_429_while_another_address_still_works(settings, users):
    settings.THREADLESS_END_USER_RATE_PER_IP_PER_MINUTE = 6
    stranger = users(STRANGER)
    conv = stranger.start()
    answers = [stranger.say(conv, f"spend {i}") for i in range(8)]
    assert [a.status_code for a in answers[:5]] == [200] * 5
    error = error_of(answers[5], 429, "rate_limited")
    assert "from this address" in error["message"] and "6 per minute" in error["message"]
    assert error["retryable"] is True and int(answers[5]["Retry-After"]) >= 1
    assert answers[5]["X-RateLimit-Limit"] == "6" and answers[5]["X-RateLimit-Remaining"] == "0"
    assert error_of(stranger.post(f"/agents/{stranger.agent_id}/conversations", {}), 429, "rate_limited")
    assert len(user_inputs(conv["id"])) == 5  # refused turns spent nothing
    # The same key from another address: the real end user is not locked out.
    real = users(REAL_USER)
    mine = real.start()
    assert real.say(mine, "what are your opening hours?").status_code == 200
    assert user_inputs(mine["id"]) == ["what are your opening hours?"]


def test_one_conversation_cannot_be_driven_past_its_own_bucket_but_another_one_can(settings, users):
    settings.THREADLESS_END_USER_RATE_PER_CONVERSATION_PER_MINUTE = 4
    stranger = users(STRANGER)
    conv = stranger.start()
    answers = [stranger.say(conv) for _ in range(6)]
    assert [a.status_code for a in answers[:4]] == [200] * 4
    assert "on this conversation" in error_of(answers[4], 429, "rate_limited")["message"]
    fresh = stranger.start()
    assert stranger.say(fresh).status_code == 200


def test_a_stranger_without_the_client_token_cannot_use_up_a_real_users_conversation(settings, users):
    settings.THREADLESS_END_USER_RATE_PER_CONVERSATION_PER_MINUTE = 3
    real = users(REAL_USER)
    mine = real.start()
    stranger = users(STRANGER)
    stranger.token = "guessed"
    for _ in range(10):
        assert stranger.say(mine).status_code == 404  # checked before the conversation's bucket
    assert [real.say(mine).status_code for _ in range(3)] == [200, 200, 200]


def test_ipv6_addresses_count_per_64_and_mapped_ipv4_as_the_ipv4_address():
    class Request:
        def __init__(self, address):
            self.META = {"REMOTE_ADDR": address}

    assert limits.client_address(Request("2001:db8:1:2:aaaa::1")) == limits.client_address(
        Request("2001:db8:1:2::ffff")
    )
    assert limits.client_address(Request("2001:db8:1:3::1")) != limits.client_address(
        Request("2001:db8:1:2::1")
    )
    assert limits.client_address(Request("::ffff:203.0.113.66")) == "203.0.113.66"
    assert limits.client_address(Request("")) == "unknown"


def test_the_project_key_is_not_held_to_the_end_user_buckets(settings, cast, agent):
    settings.THREADLESS_END_USER_RATE_PER_IP_PER_MINUTE = 2
    conv = cast.a.post(
        f"/v1/agents/{agent.id}/conversations", data="{}", content_type="application/json"
    ).json()
    for _ in range(4):
        response = cast.a.post(
            f"/v1/conversations/{conv['id']}/say",
            data='{"input": "hi"}',
            content_type="application/json",
            REMOTE_ADDR=STRANGER,
        )
        assert response.status_code == 200


# --- input size --------------------------------------------------------------------------------


def test_an_end_users_4001_character_input_is_400_naming_input_and_stores_nothing(users, cast, agent):
    stranger = users(STRANGER)
    conv = stranger.start()
    error = error_of(stranger.say(conv, "x" * 4001), 400, "invalid_request")
    assert error["message"].startswith("input: at most 4,000 characters")
    assert user_inputs(conv["id"]) == []
    assert stranger.say(conv, "x" * 4000).status_code == 200
    # The tenant's own backend (project key) keeps the API's general limit.
    own = cast.a.post(
        f"/v1/agents/{agent.id}/conversations", data="{}", content_type="application/json"
    ).json()
    response = cast.a.post(
        f"/v1/conversations/{own['id']}/say",
        data=json.dumps({"input": "y" * 4001}),
        content_type="application/json",
    )
    assert response.status_code == 200


def test_the_input_limit_is_a_setting(settings, users):
    settings.THREADLESS_END_USER_MAX_INPUT_CHARS = 10
    stranger = users(STRANGER)
    conv = stranger.start()
    assert (
        "at most 10 characters" in error_of(stranger.say(conv, "x" * 11), 400, "invalid_request")["message"]
    )


# --- concurrency cap and daily budget ----------------------------------------------------------


def test_the_cap_on_running_end_user_turns_per_agent_holds(make_agent, publishable, cast):
    agent = make_agent({**DEMO, "limits": {"concurrentTurns": 2}})
    key = publishable(agent)
    strangers = [EndUser(cast, key, agent.id, f"203.0.113.{i}") for i in range(3)]
    convs = [s.start() for s in strangers]
    # Two turns are running (begun, lease live: in this process or any other).
    for conv in convs[:2]:
        runner.turn_begin(
            conversation=Conversation.objects.get(pk=conv["id"]),
            text="slow question",
            admit=limits.admit_end_user_turn,
        )
    assert limits.running_end_user_turns(agent.id) == 2
    error = error_of(strangers[2].say(convs[2]), 429, "rate_limited")
    assert "already running 2 end-user turns" in error["message"]
    assert strangers[2].say(convs[2], "again", HTTP_ACCEPT="text/event-stream").status_code == 429
    assert user_inputs(convs[2]["id"]) == []  # refused before anything was stored
    with pytest.raises(Exception, match="already running 2"):
        runner.turn_begin(
            conversation=Conversation.objects.get(pk=convs[2]["id"]),
            text="x",
            admit=limits.admit_end_user_turn,
        )
    # The tenant's own (project-key) conversations are not counted and not capped.
    own = cast.a.post(
        f"/v1/agents/{agent.id}/conversations", data="{}", content_type="application/json"
    ).json()
    assert (
        cast.a.post(
            f"/v1/conversations/{own['id']}/say", data='{"input": "hi"}', content_type="application/json"
        ).status_code
        == 200
    )
    # One running turn ends: there is room again.
    memory = Memory.objects.get(conversations__pk=convs[0]["id"])
    memory.turns.filter(state="IN_PROGRESS").update(state="READY", lease_expires_at=None)
    assert strangers[2].say(convs[2]).status_code == 200


def test_the_concurrency_cap_defaults_to_the_setting(settings, users, agent):
    settings.THREADLESS_END_USER_CONCURRENT_TURNS = 1
    first, second = users(STRANGER), users(REAL_USER)
    a, b = first.start(), second.start()
    runner.turn_begin(
        conversation=Conversation.objects.get(pk=a["id"]), text="slow", admit=limits.admit_end_user_turn
    )
    assert "already running 1 end-user turns" in error_of(second.say(b), 429, "rate_limited")["message"]


def test_the_agents_daily_budget_gives_quota_exceeded_naming_it(make_agent, publishable, cast):
    agent = make_agent({**DEMO, "limits": {"turnsPerDay": 3}})
    key = publishable(agent)
    strangers = [EndUser(cast, key, agent.id, f"203.0.113.{i}") for i in range(4)]
    convs = [s.start() for s in strangers]
    for stranger, conv in zip(strangers[:3], convs[:3], strict=True):
        assert stranger.say(conv).status_code == 200
    answer = strangers[3].say(convs[3])
    error = error_of(answer, 429, "quota_exceeded")
    assert "daily budget of 3 end-user turns" in error["message"] and error["retryable"] is True
    assert 1 <= int(answer["Retry-After"]) <= 86400
    assert user_inputs(convs[3]["id"]) == []
    # Refused attempts do not use the budget up further, and a rerun is a turn too.
    assert strangers[3].say(convs[3]).status_code == 429
    assert error_of(strangers[0].post(f"/conversations/{convs[0]['id']}/rerun", {}), 409, "conflict")
    # The project key is not on the end users' budget.
    own = cast.a.post(
        f"/v1/agents/{agent.id}/conversations", data="{}", content_type="application/json"
    ).json()
    assert (
        cast.a.post(
            f"/v1/conversations/{own['id']}/say", data='{"input": "hi"}', content_type="application/json"
        ).status_code
        == 200
    )


def test_the_daily_budget_defaults_to_the_setting_and_counts_reruns(settings, make_agent, publishable, cast):
    settings.THREADLESS_END_USER_TURNS_PER_DAY = 2
    agent = make_agent(
        {
            "memoryPolicy": {"strictWriteDiscipline": {"enabled": True}},
            "workflow": [
                {"id": "api", "type": "http_call", "request": {"url": "http://127.0.0.1:9/refused"}}
            ],
        }
    )
    stranger = EndUser(cast, publishable(agent), agent.id, STRANGER)
    conv = stranger.start()
    assert stranger.say(conv).json()["conversationState"] == "ERROR"
    assert stranger.post(f"/conversations/{conv['id']}/rerun", {}).status_code == 200
    error = error_of(stranger.post(f"/conversations/{conv['id']}/rerun", {}), 429, "quota_exceeded")
    assert "daily budget of 2 end-user turns" in error["message"]


@pytest.mark.parametrize(
    ("limits_value", "path"),
    [
        ({"turnsPerDay": -1}, "limits.turnsPerDay"),
        ({"concurrentTurns": "4"}, "limits.concurrentTurns"),
        ({"perMinute": 5}, "limits.perMinute"),
        ([], "limits"),
    ],
)
def test_agent_limits_are_validated_naming_the_path(cast, limits_value, path):
    response = cast.a.post(
        "/v1/agents",
        data=json.dumps({"name": "x", "config": {**DEMO, "limits": limits_value}}),
        content_type="application/json",
    )
    assert error_of(response, 400, "invalid_request")["message"].startswith(path + ":")


# --- the stream pool ---------------------------------------------------------------------------


def test_a_full_stream_pool_is_503_before_anything_is_stored(settings, users):
    settings.THREADLESS_STREAM_WORKERS = 2
    stranger = users(STRANGER)
    conv = stranger.start()
    held = [turnpool.reserve(), turnpool.reserve()]  # two streamed turns running in this process
    try:
        answer = stranger.say(conv, HTTP_ACCEPT="text/event-stream")
        error = error_of(answer, 503, "unavailable")
        assert "as many streamed turns as it can (2 per process)" in error["message"]
        assert answer["Retry-After"] == "2"
        assert user_inputs(conv["id"]) == []
        assert turnpool.busy() == 2
    finally:
        for slot in held:
            slot.release()
    assert turnpool.busy() == 0


def test_a_refused_begin_gives_its_stream_slot_back(settings, make_agent, publishable, cast):
    settings.THREADLESS_STREAM_WORKERS = 1
    agent = make_agent({**DEMO, "limits": {"turnsPerDay": 1}})
    stranger = EndUser(cast, publishable(agent), agent.id, STRANGER)
    conv = stranger.start()
    assert stranger.say(conv).status_code == 200
    for _ in range(3):
        assert stranger.say(conv, HTTP_ACCEPT="text/event-stream").status_code == 429
    assert turnpool.busy() == 0


# --- metadata ----------------------------------------------------------------------------------


def test_an_end_user_cannot_write_memory_metadata(users, cast, agent):
    stranger = users(STRANGER)
    answer = stranger.post(f"/agents/{agent.id}/conversations", {"metadata": {"plan": "enterprise"}})
    error = error_of(answer, 400, "invalid_request")
    assert error["message"].startswith("metadata: only a project key")
    assert not Memory.objects.filter(metadata__plan="enterprise").exists()
    assert not Conversation.objects.filter(agent=agent).exists()
    assert stranger.post(f"/agents/{agent.id}/conversations", {"metadata": {}}).status_code == 201
    # The project key still sets it, and its filters see only what it set.
    own = cast.a.post(
        f"/v1/agents/{agent.id}/conversations",
        data=json.dumps({"metadata": {"plan": "enterprise"}}),
        content_type="application/json",
    )
    assert own.status_code == 201
    found = cast.a.get("/v1/memories?metadata.plan=enterprise").json()["data"]
    assert [m["id"] for m in found] == [own.json()["memoryId"]]


def test_the_chat_page_caps_the_input_box_at_the_end_user_limit(settings, client, agent):
    settings.THREADLESS_END_USER_MAX_INPUT_CHARS = 1234
    page = client.get(f"/chat/{agent.slug}/")
    assert page.status_code == 200 and b'maxlength="1234"' in page.content
