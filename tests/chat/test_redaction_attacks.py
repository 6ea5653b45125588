"""Redaction on the agent routes: what a publishable-key caller or an upstream
server can make the server repeat, written as the attack (a real local stub server plays the
upstream). Timeouts turn a quadratic regression into a failure; no timing assertions."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chat.models import TaskRun
from chat.tasktypes.behavior_rules import input_matches
from common.redaction import DIGEST_LIMIT, ECHO_LIMIT, RAW_LIMIT
from memories.models import Entry
from tests.chat.conftest import policy

pytestmark = [pytest.mark.django_db, pytest.mark.timeout(20)]

PROJECT_KEY = "tl_proj_" + "U9sTrEaM00" + "W" * 32


def adversarial(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def post(client, path, body, **headers):
    return client.post("/v1" + path, data=json.dumps(body), content_type="application/json", **headers)


@pytest.mark.parametrize("unit", ["a-", "a.", "eyJ-", " "])
def test_an_8_kb_unknown_field_with_a_publishable_key_is_a_short_400(cast, make_agent, publishable, unit):
    agent = make_agent({"workflow": [{"id": "llm", "type": "llm", "provider": "demo"}]})
    client = cast.api(publishable(agent))
    name = "x" + adversarial(unit, 8 * 1024)
    response = post(client, f"/agents/{agent.id}/conversations", {name: 1})
    assert response.status_code == 400, response.content[:300]
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and error["message"].endswith(": unknown field.")
    assert len(error["message"]) <= ECHO_LIMIT + 20
    conv = post(client, f"/agents/{agent.id}/conversations", {}).json()
    response = post(
        client,
        f"/conversations/{conv['id']}/say",
        {"input": "hi", name: 1},
        HTTP_X_CLIENT_TOKEN=conv["clientToken"],
    )
    assert response.status_code == 400 and len(response.json()["error"]["message"]) <= ECHO_LIMIT + 20


def test_a_deeply_nested_say_body_is_a_400(cast, make_agent):
    agent = make_agent({"workflow": [{"id": "llm", "type": "llm", "provider": "demo"}]})
    conv = post(cast.a, f"/agents/{agent.id}/conversations", {}).json()
    body = '{"input": "hi", "context": ' + '{"a":' * 200 + "1" + "}" * 200 + "}"
    response = cast.a.post(f"/v1/conversations/{conv['id']}/say", data=body, content_type="application/json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_request"


def _texts_of_the_failed_turn(conversation_id: str) -> tuple[list[str], list[str]]:
    runs = list(TaskRun.objects.filter(conversation_id=conversation_id))
    assert runs, "the task ran"
    digests = [r.error_text for r in runs]
    raws = [r.raw_error for r in runs] + list(
        Entry.objects.filter(kind="error").values_list("content", flat=True)
    )
    return digests, raws


@pytest.mark.parametrize("unit", ["a-", "a.", "eyJ-", " ", "http://", '{"a":'])
def test_a_6_kb_upstream_error_body_during_say_gives_short_keyless_texts(cast, make_agent, stub, unit):
    body = {
        "error": {"message": adversarial(unit, 3 * 1024) + f" {PROJECT_KEY} " + adversarial(unit, 3 * 1024)}
    }
    stub.set("/v1/chat/completions", status=500, json_body=body)
    agent = make_agent(
        {
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
    )
    conv = post(cast.a, f"/agents/{agent.id}/conversations", {}).json()
    response = post(cast.a, f"/conversations/{conv['id']}/say", {"input": "hi"})
    assert response.status_code == 200, response.content[:300]
    snap = response.json()
    assert snap["conversationState"] == "ERROR"
    [task_error] = snap["taskErrors"]
    text = task_error.get("text") or task_error.get("message")
    assert text.startswith("Task 'eddi://ai.labs.llm' failed: ") and len(text) <= DIGEST_LIMIT
    digests, raws = _texts_of_the_failed_turn(conv["id"])
    for value in [text, *digests, *raws]:
        assert PROJECT_KEY not in value
    assert all(len(r) <= RAW_LIMIT + 400 for r in raws)


def test_an_http_call_raw_error_keeps_host_and_path_but_not_the_query(cast, make_agent, stub):
    # URL user info is refused when the agent is saved (tests/chat/test_key_reach.py).
    stub.set("/geo", status=503, text="upstream says no " + adversarial("a-", 6 * 1024))
    url = stub.url + "/geo?sig=s1gnatur3&token=t0k3n&city=paris"
    agent = make_agent(
        {
            **policy("digest"),
            "workflow": [{"id": "weather", "type": "http_call", "request": {"method": "GET", "url": url}}],
        }
    )
    conv = post(cast.a, f"/agents/{agent.id}/conversations", {}).json()
    snap = post(cast.a, f"/conversations/{conv['id']}/say", {"input": "weather?"}).json()
    assert snap["conversationState"] == "ERROR"
    digests, raws = _texts_of_the_failed_turn(conv["id"])
    host_path = stub.url.removeprefix("http://") + "/geo"
    assert any(host_path in r for r in raws), raws
    for value in [json.dumps(snap), *digests, *raws]:
        for secret in ("s1gnatur3", "t0k3n", "paris"):
            assert secret not in value, (secret, value[:300])


# --- behavior rules' input expressions (every regex in linear time) ----------------------------


def _regex_oracle(text: str, expr: str) -> bool:
    """The old implementation: one backtracking regex per expression (fine on tiny inputs)."""
    import re

    words = " ".join(expr.lower().split())
    if not words.strip("*"):
        return True
    body = ".*".join(re.escape(part) for part in words.split("*"))
    return re.search(r"(?<!\w)" + body + r"(?!\w)", " ".join(text.lower().split()), re.S) is not None


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet="ab _*", max_size=7), st.text(alphabet="ab _-é", max_size=14))
def test_wildcard_expressions_match_exactly_what_the_old_regex_matched(expr, text):
    assert input_matches(text, [expr]) == _regex_oracle(text, expr)


@pytest.mark.parametrize("expr", ["hello*world*x", "a*a*a*a*b", "*a*", "hello"])
def test_a_100_kb_input_against_wildcard_expressions_does_not_stall(expr):
    text = "hello " * 17_000 + "a " * 1000
    assert input_matches(text, [expr]) == (expr in ("*a*", "hello"))
