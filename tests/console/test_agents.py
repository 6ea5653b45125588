"""Agent pages: list, config editor with path-level errors, secret store, Manager chat, widget page."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from chat.models import Agent
from chat.services import agent_create, conversation_create
from projects.models import Secret

CONFIG = {
    "memoryPolicy": {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}},
    "workflow": [{"id": "llm", "type": "llm", "provider": "demo", "model": "demo", "instructions": "Hi."}],
    "allowedOrigins": ["https://shop.example", "https://www.shop.example"],
}


@pytest.fixture
def agent(cast):
    return agent_create(project=cast.project_a, name="Helper <i>bot</i>", config=CONFIG, slug="helper")


def test_agents_are_listed_with_escaped_names(staff_client, agent):
    html = staff_client.get("/manage/agents/").content.decode()
    assert "Helper &lt;i&gt;bot&lt;/i&gt;" in html and "<i>bot</i>" not in html
    assert f"/manage/agents/{agent.pk}/chat/" in html and "/chat/helper/" in html


@pytest.mark.parametrize("path", ["/manage/agents/new/", "/manage/agents/secrets/"])
def test_agent_pages_are_staff_only(user_client, path):
    assert user_client.get(path).status_code == 403


def test_agent_pages_refuse_non_staff_for_an_agent(user_client, agent):
    for path in [f"/manage/agents/{agent.pk}/", f"/manage/agents/{agent.pk}/chat/"]:
        assert user_client.get(path).status_code == 403


def test_creating_an_agent(staff_client, cast):
    response = staff_client.post(
        "/manage/agents/new/", {"project": cast.project_a.pk, "name": "Support", "config": json.dumps(CONFIG)}
    )
    agent = Agent.objects.get(name="Support")
    assert response.status_code == 302 and response["Location"] == f"/manage/agents/{agent.pk}/"
    assert agent.slug == "support" and agent.project == cast.project_a


def test_a_config_error_is_shown_at_its_json_path(staff_client, agent):
    bad = {**CONFIG, "workflow": [{**CONFIG["workflow"][0], "provider": "openia"}]}
    response = staff_client.post(
        f"/manage/agents/{agent.pk}/", {"name": agent.name, "config": json.dumps(bad)}
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert "At <code>workflow[0].provider</code>:" in html
    assert 'aria-invalid="true"' in html
    assert "openia" in html  # the staff member's edit is kept in the editor
    agent.refresh_from_db()
    assert agent.config["workflow"][0]["provider"] == "demo"


def test_a_json_syntax_error_names_line_and_column(staff_client, agent):
    response = staff_client.post(
        f"/manage/agents/{agent.pk}/", {"name": agent.name, "config": '{\n  "workflow": ['}
    )
    assert response.status_code == 400
    assert "line 2, column" in response.content.decode()


def test_saving_a_valid_config(staff_client, agent):
    new = {**CONFIG, "description": "Now with <b>tags</b>"}
    response = staff_client.post(f"/manage/agents/{agent.pk}/", {"name": "Helper", "config": json.dumps(new)})
    assert response.status_code == 302
    agent.refresh_from_db()
    assert agent.name == "Helper" and agent.config["description"] == "Now with <b>tags</b>"


def test_unknown_agent_is_404(staff_client):
    for path in [
        "/manage/agents/agt_nope/",
        "/manage/agents/agt_nope/chat/",
        "/manage/agents/agt_nope/delete/",
    ]:
        assert staff_client.get(path).status_code == 404


def test_deleting_an_agent_needs_its_slug(staff_client, agent):
    url = f"/manage/agents/{agent.pk}/delete/"
    assert staff_client.post(url, {"confirm": "nope"}).status_code == 400
    assert staff_client.post(url, {"confirm": "helper"}).status_code == 302
    assert not Agent.objects.filter(pk=agent.pk).exists()


def test_the_secret_store_keeps_values_encrypted_and_never_shows_them(staff_client, cast):
    url = f"/manage/agents/secrets/?project={cast.project_a.pk}"
    response = staff_client.post(
        url, {"project": cast.project_a.pk, "name": "OPENAI_KEY", "value": "sk-live-0123456789abcdefWXYZ"}
    )
    assert response.status_code == 302
    secret = Secret.objects.get(project=cast.project_a, name="OPENAI_KEY")
    assert "sk-live" not in secret.ciphertext
    html = staff_client.get(url).content.decode()
    assert "OPENAI_KEY" in html and "…WXYZ" in html and "sk-live-0123456789" not in html
    staff_client.post(url, {"project": cast.project_a.pk, "delete": "OPENAI_KEY"})
    assert not Secret.objects.filter(project=cast.project_a).exists()


def test_a_bad_secret_name_is_refused(staff_client, cast):
    response = staff_client.post(
        "/manage/agents/secrets/", {"project": cast.project_a.pk, "name": "bad name!", "value": "x"}
    )
    assert response.status_code == 400 and b"letters, digits" in response.content


def test_manager_chat_page_shows_a_failed_turn_with_its_raw_reason(staff_client, agent):
    from django.db import transaction

    from memories.models import Turn
    from memories.services import entries_append, memory_lock

    conversation, _ = conversation_create(agent=agent)
    with transaction.atomic():
        entries_append(
            memory=memory_lock(conversation.memory),
            items=[{"kind": "message", "role": "user", "content": "<b>hi</b>", "tokens": 5}],
        )
    Turn.objects.filter(memory=conversation.memory, number=1).update(
        state="ERROR",
        task_errors=[
            {
                "type": "errorDigest",
                "taskId": "llm",
                "taskType": "llm",
                "text": "Task 'llm' failed: Streaming chat failed: <model> is deprecated",
            }
        ],
    )
    html = staff_client.get(f"/manage/agents/{agent.pk}/chat/?c={conversation.pk}").content.decode()
    assert "msg msg-error" in html
    assert "Task &#x27;llm&#x27; failed: Streaming chat failed: &lt;model&gt; is deprecated" in html
    assert html.count("Streaming chat failed") == 1  # the raw reason once per failed task
    assert "&lt;b&gt;hi&lt;/b&gt;" in html
    assert "turn 1 · Failed" in html and "· ERROR" not in html
    assert '"READY": "Answered"' in html  # the words the page's script shows for a streamed turn


def test_manager_chat_say_needs_staff_and_csrf(cast, agent):
    conversation, _ = conversation_create(agent=agent)
    url = f"/manage/agents/{agent.pk}/chat/{conversation.pk}/say/"
    assert Client().post(url, {"input": "hi"}).status_code in (302, 403)
    client = Client(enforce_csrf_checks=True)
    client.force_login(cast.staff)
    assert client.post(url, {"input": "hi"}).status_code == 403


def test_manager_chat_offers_one_button_to_start_a_conversation(staff_client, agent):
    new = f'action="/manage/agents/{agent.pk}/chat/new/"'
    html = staff_client.get(f"/manage/agents/{agent.pk}/chat/").content.decode()
    assert html.count(new) == 1 and 'type="submit" autofocus>Start a new conversation' in html
    conversation, _ = conversation_create(agent=agent)
    html = staff_client.get(f"/manage/agents/{agent.pk}/chat/?c={conversation.pk}").content.decode()
    assert html.count(new) == 1 and "Start a new conversation" not in html and ">New conversation<" in html
    assert re.search(r'<textarea id="chat-input"[^>]* autofocus', html)  # ready to type


def test_starting_a_manager_chat_conversation(staff_client, agent):
    response = staff_client.post(f"/manage/agents/{agent.pk}/chat/new/")
    assert response.status_code == 302 and "?c=conv_" in response["Location"]


def test_the_end_user_page_may_be_framed_only_by_the_agents_origins(db, agent):
    response = Client().get("/chat/helper/")
    assert response.status_code == 200
    csp = response["Content-Security-Policy"]
    assert "frame-ancestors https://shop.example https://www.shop.example" in csp
    assert "script-src 'self'" in csp
    assert not response.has_header("X-Frame-Options")
    assert not response.cookies
    assert "Helper &lt;i&gt;bot&lt;/i&gt;" in response.content.decode()


def test_an_agent_without_origins_cannot_be_framed(cast):
    agent_create(
        project=cast.project_a, name="Private", config={**CONFIG, "allowedOrigins": []}, slug="private"
    )
    assert "frame-ancestors 'none'" in Client().get("/chat/private/")["Content-Security-Policy"]


def test_unknown_chat_page_is_404(db):
    assert Client().get("/chat/nobody/").status_code == 404


def test_a_publishable_key_is_created_for_a_chosen_agent(staff_client, cast, agent):
    from projects.models import ApiKey

    page = staff_client.get(f"/manage/projects/{cast.project_a.pk}/").content.decode()
    assert f'<option value="{agent.pk}">Helper &lt;i&gt;bot&lt;/i&gt; (helper)</option>' in page
    response = staff_client.post(
        f"/manage/projects/{cast.project_a.pk}/keys/",
        {"kind": "publishable", "agent": agent.pk, "name": "site"},
    )
    assert response.status_code == 200 and 'value="tl_pub_' in response.content.decode()
    assert ApiKey.objects.get(project=cast.project_a, kind="publishable").agent_id == agent.pk
