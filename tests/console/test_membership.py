"""A staff account sees and administers only its own projects.

The attacker is a staff account of project A that knows (or guesses) project B's ids: every
console page answers 404 for them, exactly like ids that do not exist, and nothing of B leaks
into the lists. A superuser sees every project.
"""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from chat.models import Agent
from chat.services import agent_create, conversation_create
from memories.models import Fact, Memory
from memories.services import fact_create, memory_create, memory_decorate, report_accept
from projects.models import ApiKey, Project, Secret
from projects.services import key_create, secret_set

CONFIG = {
    "memoryPolicy": {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}},
    "workflow": [{"id": "llm", "type": "llm", "provider": "demo", "model": "demo", "instructions": "Hi."}],
    "allowedOrigins": [],
}


def _failed_memory(project, external_id: str, task: str) -> Memory:
    memory, _ = memory_create(
        project=project,
        external_id=external_id,
        policy={"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}},
    )
    memory_decorate(memory=memory, messages=[{"role": "user", "content": "hello"}])
    report_accept(
        memory=memory,
        messages=[],
        failures=[{"task_id": task, "error": "boom", "output": None, "has_output": False}],
    )
    return memory


@pytest.fixture
def world(cast):
    users = get_user_model()
    ann = users.objects.create_user("ann", password="ann-pass-12345", is_staff=True)
    cast.project_a.members.add(ann)
    root = users.objects.create_user("root", password="root-pass-12345", is_staff=True, is_superuser=True)
    memory_a = _failed_memory(cast.project_a, "alice-of-alpha", "weather_alpha")
    memory_b = _failed_memory(cast.project_b, "bob-of-bravo", "payroll_bravo")
    fact_b, _ = fact_create(memory=memory_b, text="Bob's salary is secret.", extractor="console")
    agent_a = agent_create(project=cast.project_a, name="Alpha helper", config=CONFIG, slug="alpha-helper")
    agent_b = agent_create(project=cast.project_b, name="Bravo payroll bot", config=CONFIG, slug="bravo-bot")
    conversation_b, _ = conversation_create(agent=agent_b, metadata={})
    key_b, _ = key_create(project=cast.project_b, kind="project", name="bravo backend")
    secret_set(project=cast.project_b, name="BRAVO_OPENAI", value="sk-bravo-0123456789")
    ann_client, root_client = Client(), Client()
    ann_client.force_login(ann)
    root_client.force_login(root)
    return {
        "ann": ann_client,
        "root": root_client,
        "a": cast.project_a,
        "b": cast.project_b,
        "memory_a": memory_a,
        "memory_b": memory_b,
        "fact_b": fact_b,
        "agent_a": agent_a,
        "agent_b": agent_b,
        "conversation_b": conversation_b,
        "key_b": key_b,
    }


def test_a_staff_member_sees_only_its_projects_in_every_list(world):
    ann = world["ann"]
    pages = [
        "/manage/",
        "/manage/projects/",
        "/manage/memories/",
        "/manage/digests/",
        "/manage/agents/",
        "/manage/agents/secrets/",
        "/manage/agents/new/",
    ]
    for path in pages:
        response = ann.get(path)
        assert response.status_code == 200, path
        html = response.content.decode()
        for leak in ("Bravo", world["b"].pk, "bob-of-bravo", "payroll_bravo", "BRAVO_OPENAI"):
            assert leak not in html, (path, leak)
    assert "alice-of-alpha" in ann.get("/manage/memories/").content.decode()
    assert "weather_alpha" in ann.get("/manage/digests/").content.decode()
    assert "Alpha helper" in ann.get("/manage/agents/").content.decode()


def test_another_projects_ids_are_404_on_every_read(world):
    ann, b, memory_b, agent_b = world["ann"], world["b"], world["memory_b"], world["agent_b"]
    paths = [
        f"/manage/?project={b.pk}",
        f"/manage/projects/{b.pk}/",
        f"/manage/memories/?project={b.pk}",
        f"/manage/memories/{memory_b.pk}/",
        f"/manage/memories/{memory_b.pk}/?tab=facts",
        f"/manage/memories/{memory_b.pk}/?tab=model",
        f"/manage/memories/{memory_b.pk}/delete/",
        f"/manage/digests/?project={b.pk}",
        f"/manage/agents/{agent_b.pk}/",
        f"/manage/agents/{agent_b.pk}/chat/",
        f"/manage/agents/{agent_b.pk}/delete/",
        f"/manage/agents/secrets/?project={b.pk}",
    ]
    for path in paths:
        response = ann.get(path)
        assert response.status_code == 404, path
        assert b"Bravo" not in response.content and b"bob-of-bravo" not in response.content, path


def test_another_projects_ids_are_404_on_every_write_and_nothing_changes(world):
    ann, b = world["ann"], world["b"]
    memory_b, agent_b, key_b, fact_b = world["memory_b"], world["agent_b"], world["key_b"], world["fact_b"]
    writes = [
        (f"/manage/projects/{b.pk}/", {"name": "pwned"}),
        (f"/manage/projects/{b.pk}/keys/", {"kind": "project", "name": "stolen"}),
        (f"/manage/projects/{b.pk}/keys/{key_b.pk}/revoke/", {}),
        (f"/manage/memories/{memory_b.pk}/delete/", {"confirm": memory_b.pk}),
        (f"/manage/memories/{memory_b.pk}/facts/", {"text": "planted"}),
        (f"/manage/memories/{memory_b.pk}/facts/{fact_b.pk}/", {"text": "changed"}),
        (f"/manage/memories/{memory_b.pk}/facts/{fact_b.pk}/delete/", {}),
        (f"/manage/agents/{agent_b.pk}/", {"name": "pwned", "project": b.pk, "config": json.dumps(CONFIG)}),
        (f"/manage/agents/{agent_b.pk}/delete/", {"confirm": agent_b.slug}),
        (f"/manage/agents/{agent_b.pk}/chat/new/", {}),
        (f"/manage/agents/{agent_b.pk}/chat/{world['conversation_b'].pk}/say/", {"input": "hi"}),
        ("/manage/agents/secrets/", {"project": b.pk, "name": "BRAVO_OPENAI", "value": "sk-attacker-000000"}),
        ("/manage/agents/secrets/", {"project": b.pk, "delete": "BRAVO_OPENAI"}),
    ]
    for path, data in writes:
        response = ann.post(path, data)
        assert response.status_code == 404, path
    b.refresh_from_db()
    assert b.name == "Bravo"
    assert ApiKey.objects.filter(project=b).count() == 2 and not ApiKey.objects.filter(
        project=b, name="stolen"
    )
    assert ApiKey.objects.get(pk=key_b.pk).revoked_at is None
    assert Memory.objects.filter(pk=memory_b.pk).exists()
    assert list(Fact.objects.filter(memory=memory_b, active=True).values_list("text", flat=True)) == [
        "Bob's salary is secret."
    ]
    agent_b.refresh_from_db()
    assert agent_b.name == "Bravo payroll bot"
    assert Secret.objects.filter(project=b, name="BRAVO_OPENAI").count() == 1
    from projects.services import secret_value

    assert secret_value(project_id=b.pk, name="BRAVO_OPENAI") == "sk-bravo-0123456789"


def test_a_staff_member_cannot_create_an_agent_in_another_project(world):
    response = world["ann"].post(
        "/manage/agents/new/", {"name": "Trojan", "project": world["b"].pk, "config": json.dumps(CONFIG)}
    )
    assert response.status_code == 400
    assert not Agent.objects.filter(name="Trojan").exists()


def test_a_superuser_sees_every_project(world):
    root = world["root"]
    html = root.get("/manage/projects/").content.decode()
    assert "Alpha" in html and "Bravo" in html
    assert root.get(f"/manage/projects/{world['b'].pk}/").status_code == 200
    assert root.get(f"/manage/memories/{world['memory_b'].pk}/").status_code == 200
    assert root.get(f"/manage/agents/{world['agent_b'].pk}/").status_code == 200
    assert "payroll_bravo" in root.get("/manage/digests/").content.decode()


def test_a_staff_member_without_projects_sees_none(world):
    users = get_user_model()
    client = Client()
    client.force_login(users.objects.create_user("newbie", password="newbie-pass-123", is_staff=True))
    html = client.get("/manage/projects/").content.decode()
    assert "Alpha" not in html and "Bravo" not in html
    assert client.get(f"/manage/projects/{world['a'].pk}/").status_code == 404


def test_a_project_created_in_the_console_belongs_to_its_creator(world):
    response = world["ann"].post("/manage/projects/", {"name": "Charlie"})
    assert response.status_code == 302
    charlie = Project.objects.get(name="Charlie")
    assert list(charlie.members.values_list("username", flat=True)) == ["ann"]
    assert world["ann"].get(f"/manage/projects/{charlie.pk}/").status_code == 200


def test_bootstrap_demo_and_create_project_make_the_demo_staff_user_a_member(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    call_command("bootstrap_demo", "--json", stdout=io.StringIO())
    demo = json.loads((tmp_path / "demo.json").read_text())
    project = Project.objects.get(pk=demo["project_id"])
    assert list(project.members.values_list("username", flat=True)) == [demo["username"]]
    out = io.StringIO()
    call_command("create_project", "Second", "--json", stdout=out)
    created = json.loads(out.getvalue())
    assert created["members"] == [demo["username"]]
    assert Project.objects.get(pk=created["id"]).members.filter(username=demo["username"]).exists()


def test_create_project_adds_the_named_members(db):
    get_user_model().objects.create_user("ops", password="ops-pass-12345", is_staff=True)
    out = io.StringIO()
    call_command("create_project", "Ops", "--member", "ops", "--json", stdout=out)
    assert json.loads(out.getvalue())["members"] == ["ops"]


def test_project_members_adds_and_removes_accounts(world):
    out = io.StringIO()
    call_command("project_members", "--project", world["b"].pk, "--add", "ann", "--json", stdout=out)
    assert "ann" in json.loads(out.getvalue())["members"]
    assert world["ann"].get(f"/manage/projects/{world['b'].pk}/").status_code == 200
    call_command("project_members", "--project", world["b"].pk, "--remove", "ann", stdout=io.StringIO())
    assert world["ann"].get(f"/manage/projects/{world['b'].pk}/").status_code == 404
