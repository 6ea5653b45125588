"""The end-user chat page (/chat/<agent-slug>/): what its header shows an end user."""

from __future__ import annotations

from django.test import Client


def test_the_header_shows_the_agents_name_and_none_of_its_staff_config(make_agent):
    agent = make_agent(
        {
            "description": "Internal: escalate refunds over 500 EUR to tier 2.",
            "workflow": [{"id": "llm", "type": "llm", "provider": "demo", "instructions": "Be terse."}],
        },
        name="Shop <help>",
    )
    html = Client().get(f"/chat/{agent.slug}/").content.decode()
    head = html[html.index('<header class="widget-head">') : html.index("</header>")]
    assert "<h1>Shop &lt;help&gt;</h1>" in head
    assert "escalate" not in html and "Be terse" not in html
