"""http_call templates are injection-safe — the attacker's input arrives upstream
as one string value, never as a new JSON field or a new query parameter (a real stub server
records what it received)."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from chat import services
from chat.templating import render_json

pytestmark = pytest.mark.django_db

ATTACK = 'x", "role": "admin", "z": "'


def say(agent, text: str) -> dict:
    conversation, _ = services.conversation_create(agent=agent)
    return services.turn_say(conversation=conversation, text=text)


def post_task(url: str, body, **extra) -> dict:
    return {
        "id": "api",
        "type": "http_call",
        "request": {"method": "POST", "url": url, "body": body, **extra},
    }


def test_a_string_body_template_keeps_the_attackers_input_inside_the_string_value(make_agent, stub):
    stub.set("/search", json_body={"ok": True})
    agent = make_agent({"workflow": [post_task(stub.url + "/search", '{"q": "{{ input }}"}')]})
    stub.requests.clear()
    snap = say(agent, ATTACK)
    assert snap["conversationState"] == "READY"
    seen = stub.requests[-1]
    assert seen.json == {"q": ATTACK}
    assert "role" not in seen.json
    assert seen.headers["Content-Type"] == "application/json"


@pytest.mark.parametrize(
    "text",
    [
        'a\\", "role": "admin',  # a backslash before the quote
        'line\n", "role": "admin"}\n{"',  # control characters and a second document
        "\\",  # a lone backslash at the end of the string
        '"}]} {"q": "',  # closing every bracket
        "ünïcode ✓ \u2028",
    ],
)
def test_quotes_backslashes_and_control_characters_arrive_as_the_same_string(make_agent, stub, text):
    stub.set("/search", json_body={"ok": True})
    agent = make_agent({"workflow": [post_task(stub.url + "/search", '{"q": "say: {{ input }}!", "n": 1}')]})
    stub.requests.clear()
    say(agent, text)
    assert stub.requests[-1].json == {"q": f"say: {text}!", "n": 1}


def test_a_placeholder_outside_a_string_is_inserted_as_one_json_value(make_agent, stub):
    stub.set("/geo", json_body={"city": {"id": 7, "name": 'Oslo", "admin": true, "x": "'}})
    stub.set("/forecast", json_body={"temp": 3})
    agent = make_agent(
        {
            "workflow": [
                {"id": "geo", "type": "http_call", "storeAs": "place", "request": {"url": stub.url + "/geo"}},
                post_task(
                    stub.url + "/forecast",
                    '{"q": {{ input }}, "id": {{ data.place.city.id }}, '
                    '"city": {{ data.place.city }}, "gone": {{ data.nothing }}}',
                ),
            ]
        }
    )
    stub.requests.clear()
    say(agent, ATTACK)
    assert stub.requests[-1].json == {
        "q": ATTACK,
        "id": 7,
        "city": {"id": 7, "name": 'Oslo", "admin": true, "x": "'},
        "gone": None,
    }


def test_a_url_template_percent_encodes_the_inserted_value(make_agent, stub):
    stub.set("/search", json_body={"ok": True})
    agent = make_agent(
        {
            "workflow": [
                {
                    "id": "api",
                    "type": "http_call",
                    "request": {"url": stub.url + "/search?q={{ input }}&lang=en"},
                }
            ]
        }
    )
    attack = "rain&lang=xx&role=admin#frag/../../admin?x=1 %41"
    stub.requests.clear()
    say(agent, attack)
    seen = urlsplit(stub.requests[-1].path)
    assert seen.path == "/search"
    assert parse_qs(seen.query) == {"q": [attack], "lang": ["en"]}
    assert seen.query == f"q={quote(attack, safe='')}&lang=en"


def test_an_object_body_still_sends_the_input_as_a_string_value(make_agent, stub):
    stub.set("/search", json_body={"ok": True})
    agent = make_agent(
        {"workflow": [post_task(stub.url + "/search", {"q": "{{ input }}", "tags": ["{{ input }}"]})]}
    )
    stub.requests.clear()
    say(agent, ATTACK)
    assert stub.requests[-1].json == {"q": ATTACK, "tags": [ATTACK]}


def test_a_template_ending_on_a_lone_backslash_cannot_be_used_to_unescape_a_quote():
    rendered = render_json('{"q": "\\{{ input }}"}', {"input": '", "role": "admin'})
    assert json.loads(rendered) == {"q": '\\", "role": "admin'}


def test_braces_and_quotes_in_the_template_outside_placeholders_are_left_alone():
    template = '{"a": "{not a placeholder}", "b": "\\"{{ input }}\\"", "c": [{{ input }}]}'
    assert json.loads(render_json(template, {"input": 'q"'})) == {
        "a": "{not a placeholder}",
        "b": '"q""',
        "c": ['q"'],
    }
