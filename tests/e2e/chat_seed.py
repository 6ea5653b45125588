"""Agents for the browser tests: an OpenAI-compatible stub provider (a real local HTTP server)
that fails with a provider error until told to answer, and agents created through /v1."""

from __future__ import annotations

import json

PROVIDER_TEXT = "`temperature` is deprecated for this model."
REPLY = ["Hello", " from", " the", " stub."]


class FlakyProvider:
    """Wraps tests.chat.stubs.Stub: `fail()` answers 400 with a provider message, `heal()` streams a reply."""

    def __init__(self) -> None:
        from tests.chat.stubs import Stub

        self.stub = Stub()
        self.url = self.stub.url
        self.fail()

    def fail(self) -> None:
        self.stub.set(
            "/v1/chat/completions",
            status=400,
            json_body={"error": {"message": PROVIDER_TEXT, "type": "invalid_request_error"}},
        )

    def heal(self) -> None:
        self.stub.openai_stream("/v1/chat/completions", REPLY)

    def close(self) -> None:
        self.stub.close()


def agent_config(provider_url: str, origins: list[str] | None = None) -> dict:
    return {
        "description": "Answers travel questions.",
        "memoryPolicy": {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}},
        "workflow": [
            {
                "id": "eddi://ai.labs.llm",
                "type": "llm",
                "provider": "openai",
                "model": "gpt-test",
                "baseUrl": provider_url + "/v1",
                "instructions": "Be brief.",
            }
        ],
        "allowedOrigins": origins or [],
    }


def create_agent(server, *, name: str, slug: str, config: dict) -> dict:
    with server.client() as api:
        response = api.post("/agents", json={"name": name, "slug": slug, "config": config})
        assert response.status_code == 201, response.text
        return response.json()


def publishable_key(server, *, slug: str) -> str:
    out = server.manage(
        "create_key",
        "--project",
        server.demo["project_id"],
        "--kind",
        "publishable",
        "--agent",
        slug,
        "--json",
    )
    return json.loads(out.strip().splitlines()[-1])["key"]


def screenshot_pages(server) -> list:
    """Extra pages for scripts/console_screenshots.py: agents, config error, Manager chat, end-user chat."""
    import httpx

    provider = FlakyProvider()  # kept alive for the run (the script exits afterwards)
    agent = create_agent(
        server, name="Travel helper", slug="travel-helper", config=agent_config(provider.url)
    )
    key = publishable_key(server, slug="travel-helper")
    with server.client() as api:
        conv = api.post(f"/agents/{agent['id']}/conversations", json={}).json()
        headers = {"Accept": "text/event-stream"}
        api.post(
            f"/conversations/{conv['id']}/say",
            json={"input": "Is it cold in Oslo in March?"},
            headers=headers,
            timeout=60,
        )
        provider.heal()
        api.post(
            f"/conversations/{conv['id']}/say",
            json={"input": "Any tips for packing?"},
            headers=headers,
            timeout=60,
        )
        provider.fail()
        api.post(
            f"/conversations/{conv['id']}/say",
            json={"input": "And the weather tomorrow?"},
            headers=headers,
            timeout=60,
        )
    del httpx

    def bad_config(page):
        editor = page.get_by_label("Configuration (JSON)")
        editor.fill(editor.input_value().replace('"provider": "openai"', '"provider": "openia"'))
        page.get_by_role("button", name="Save config").click()
        page.wait_for_selector(".json-errors")

    def widget_failure(page):
        page.get_by_label("Your message").fill("Is it cold in Oslo?")
        page.get_by_role("button", name="Send").click()
        page.wait_for_selector("#banner:not([hidden])")

    return [
        ("agents", "/manage/agents/", None),
        ("agent-config-error", f"/manage/agents/{agent['id']}/", bad_config),
        ("manager-chat", f"/manage/agents/{agent['id']}/chat/?c={conv['id']}", None),
        ("secrets", "/manage/agents/secrets/", None),
        ("end-user-chat", f"/chat/travel-helper/#key={key}", widget_failure),
    ]
