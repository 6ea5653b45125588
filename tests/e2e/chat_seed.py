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
        self.stub.set("/v1/chat/completions", status=400,
                      json_body={"error": {"message": PROVIDER_TEXT, "type": "invalid_request_error"}})

    def heal(self) -> None:
        self.stub.openai_stream("/v1/chat/completions", REPLY)

    def close(self) -> None:
        self.stub.close()


def agent_config(provider_url: str, origins: list[str] | None = None) -> dict:
    return {
        "description": "Answers travel questions.",
        "memoryPolicy": {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}},
        "workflow": [{"id": "eddi://ai.labs.llm", "type": "llm", "provider": "openai", "model": "gpt-test",
                      "baseUrl": provider_url + "/v1", "instructions": "Be brief."}],
        "allowedOrigins": origins or [],
    }


def create_agent(server, *, name: str, slug: str, config: dict) -> dict:
    with server.client() as api:
        response = api.post("/agents", json={"name": name, "slug": slug, "config": config})
        assert response.status_code == 201, response.text
        return response.json()


def publishable_key(server, *, slug: str) -> str:
    out = server.manage("create_key", "--project", server.demo["project_id"], "--kind", "publishable",
                        "--agent", slug, "--json")
    return json.loads(out.strip().splitlines()[-1])["key"]
