"""Every console page, taken from the URLconf (not a hand-picked list), as a staff member of
another project: no page shows project B's data, every B id is a 404, and no write lands in B.

The attacker is `mallory`, staff and a member of project C only. B has a memory with a digest,
a fact, an agent with a conversation, a second key, a secret and a proxy upstream with a stored
key. Each console route is requested with B's ids filled in (GET and POST), and each route
without ids with `?project=<B>` and a POST naming B. A new console route with a URL parameter
this test does not know fails the test, so it cannot be added without being walked.
"""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from chat.models import Agent, Conversation
from chat.services import agent_create, conversation_create
from memories.models import Fact, Memory
from memories.services import fact_create, memory_create, memory_decorate, report_accept
from projects.models import ApiKey, Secret
from projects.services import key_create, project_create, secret_set, secret_value
from proxy import services as proxy_services
from proxy.models import UpstreamSetting
from webhooks import services as webhook_services
from webhooks.models import WebhookDelivery, WebhookEndpoint

CONFIG = {
    "workflow": [{"id": "llm", "type": "llm", "provider": "demo", "model": "demo"}],
    "allowedOrigins": [],
}
B_UPSTREAM = "https://bravo-upstream.example/v1"
B_PROVIDER_KEY = "sk-bravo-provider-0123456789"
MARKERS = (
    "Bravo",
    "bob-of-bravo",
    "payroll_bravo",
    "BRAVO_OPENAI",
    "bravo-upstream",
    "Bravo payroll bot",
    "Bob's salary",
    "bravo-hook",
)


def console_routes() -> list[str]:
    """Every route under /manage/ in the URLconf, as a pattern string
    (`manage/projects/<str:project_id>/`)."""
    found = []

    def walk(patterns, prefix: str) -> None:
        for item in patterns:
            route = prefix + str(item.pattern)
            if isinstance(item, URLResolver):
                walk(item.url_patterns, route)
            elif isinstance(item, URLPattern) and route.startswith("manage/"):
                found.append(route)

    walk(get_resolver().url_patterns, "")
    return found


@pytest.fixture
def world(cast):
    users = get_user_model()
    project_c = project_create(name="Charlie")
    mallory = users.objects.create_user("mallory", password="mallory-pass-123", is_staff=True)
    project_c.members.add(mallory)
    b = cast.project_b
    memory_b, _ = memory_create(
        project=b,
        external_id="bob-of-bravo",
        policy={"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}},
    )
    memory_decorate(memory=memory_b, messages=[{"role": "user", "content": "hello"}])
    report_accept(
        memory=memory_b,
        messages=[],
        failures=[{"task_id": "payroll_bravo", "error": "boom", "output": None, "has_output": False}],
    )
    fact_b, _ = fact_create(memory=memory_b, text="Bob's salary is secret.", extractor="console")
    agent_b = agent_create(project=b, name="Bravo payroll bot", config=CONFIG, slug="bravo-bot")
    conversation_b, _ = conversation_create(agent=agent_b, metadata={})
    key_b, _ = key_create(project=b, kind="project", name="bravo backend")
    secret_set(project=b, name="BRAVO_OPENAI", value="sk-bravo-0123456789")
    proxy_services.upstream_setting_set(
        project=b, provider="openai", base_url=B_UPSTREAM, api_key=B_PROVIDER_KEY
    )
    endpoint_b, _ = webhook_services.endpoint_create(
        project=b, url="https://93.184.216.34/bravo-hook", events=["fact.created"]
    )
    delivery_b = webhook_services.endpoint_test(endpoint=endpoint_b)
    client = Client()
    client.force_login(mallory)
    ids = {
        "endpoint_id": endpoint_b.pk,
        "delivery_id": delivery_b.pk,
        "project_id": b.pk,
        "key_id": key_b.pk,
        "memory_id": memory_b.pk,
        "fact_id": fact_b.pk,
        "agent_id": agent_b.pk,
        "conversation_id": conversation_b.pk,
    }
    return {"client": client, "b": b, "ids": ids, "c": project_c}


def snapshot(project) -> dict:
    """Everything of B a console write could change."""
    project.refresh_from_db()
    return {
        "project": (project.name, project.rate_limit_per_minute, project.retention_days),
        "keys": sorted(ApiKey.objects.filter(project=project).values_list("pk", "name", "revoked_at")),
        "memories": sorted(Memory.objects.filter(project=project).values_list("pk", "external_id")),
        "facts": sorted(Fact.objects.filter(memory__project=project).values_list("pk", "text", "active")),
        "agents": sorted(Agent.objects.filter(project=project).values_list("pk", "name", "slug")),
        "conversations": Conversation.objects.filter(agent__project=project).count(),
        "secrets": sorted(Secret.objects.filter(project=project).values_list("name", "ciphertext")),
        "upstreams": sorted(
            UpstreamSetting.objects.filter(project=project).values_list("provider", "base_url", "api_key_env")
        ),
        "webhooks": sorted(
            WebhookEndpoint.objects.filter(project=project).values_list("pk", "url", "enabled", "secret")
        ),
        "deliveries": sorted(
            WebhookDelivery.objects.filter(endpoint__project=project).values_list(
                "pk", "state", "next_attempt_at"
            )
        ),
    }


def _fill(route: str, ids: dict) -> str:
    path = "/" + route
    while "<" in path:
        start = path.index("<")
        end = path.index(">", start)
        name = path[start + 1 : end].split(":")[-1]
        assert name in ids, f"console route {route} takes <{name}>: add it to this test's ids"
        path = path[:start] + str(ids[name]) + path[end + 1 :]
    return path


def _writes(b, attacker_url: str) -> list[dict]:
    """Form bodies that would change B if a page took them: every field a console form has."""
    return [
        {
            "project": b.pk,
            "provider": "openai",
            "openai-base_url": attacker_url,
            "openai-api_key": "sk-attacker",
        },
        {
            "project": b.pk,
            "name": "pwned",
            "kind": "project",
            "text": "planted",
            "confirm": "bravo-bot",
            "config": json.dumps(CONFIG),
            "input": "hi",
            "value": "sk-attacker-000000",
            "rate_limit_per_minute": "1",
            "allowance_requests_per_month": "1",
            "allowance_memories": "1",
            "retention_days": "1",
            "url": attacker_url,
            "events": ["fact.created"],
            "enabled": "on",
        },
        {"project": b.pk, "delete": "BRAVO_OPENAI"},
    ]


def test_the_walk_covers_every_console_page():
    routes = console_routes()
    assert "manage/proxy/" in routes and "manage/agents/secrets/" in routes
    assert "manage/projects/<str:project_id>/" in routes
    assert len(routes) >= 20


def test_no_console_page_shows_or_changes_another_projects_data(world):
    client, b, ids = world["client"], world["b"], world["ids"]
    before = snapshot(b)
    routes = [
        r for r in console_routes() if r != "manage/logout/"
    ]  # signing out ends the walk; it has no data
    for route in routes:
        path = _fill(route, ids)
        takes_ids = "<" in route
        reads = [path] if takes_ids else [path, f"{path}?project={b.pk}"]
        for url in reads:
            response = client.get(url)
            html = response.content.decode(errors="replace")
            if takes_ids:
                assert response.status_code in (404, 405), (url, response.status_code)
            else:  # a page that filters by ?project= answers 404 for B; one that ignores it shows C's data
                # (an operators-only page refuses project staff: 403)
                assert response.status_code in (200, 302, 403, 404, 405), (url, response.status_code)
            for marker in (*MARKERS, b.pk):
                assert marker not in html, (url, marker)
        for data in _writes(b, "http://127.0.0.2:9/v1"):
            response = client.post(path, data)
            html = response.content.decode(errors="replace")
            if takes_ids:
                assert response.status_code in (404, 405), (path, response.status_code)
            for marker in MARKERS:  # (B's id may come back in a form error: the attacker sent it)
                assert marker not in html, (path, data, marker)
    assert snapshot(b) == before
    assert secret_value(project_id=b.pk, name="proxy.openai") == B_PROVIDER_KEY


def test_the_proxy_page_is_404_for_another_projects_id_on_read_and_write(world):
    client, b = world["client"], world["b"]
    assert client.get(f"/manage/proxy/?project={b.pk}").status_code == 404
    refused = client.post(
        "/manage/proxy/", {"project": b.pk, "provider": "openai", "openai-base_url": "http://127.0.0.2:9/v1"}
    )
    assert refused.status_code == 404
    assert UpstreamSetting.objects.get(project=b, provider="openai").base_url == B_UPSTREAM
    own = client.get("/manage/proxy/")
    assert own.status_code == 200
    html = own.content.decode()
    assert "Charlie" in html and "Bravo" not in html and "Alpha" not in html
