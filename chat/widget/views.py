"""The end-user chat page (/chat/<agent-slug>/).

The page is static HTML + a script that talks to /v1 with the agent's publishable key and the
conversation's client token (fetch, no cookies). It never receives provider text: the API
strips it for publishable keys, and this view renders nothing but the agent's name.
Framing: only the agent's `allowedOrigins` may embed it (CSP frame-ancestors).
"""

from __future__ import annotations

from django.conf import settings
from django.http import Http404
from django.shortcuts import render
from django.views.decorators.clickjacking import xframe_options_exempt

from chat.selectors import agent_by_slug


def _csp(origins: list[str]) -> str:
    ancestors = " ".join(origins) if origins else "'none'"
    return (
        "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        f"base-uri 'none'; form-action 'self'; frame-ancestors {ancestors}"
    )


def _agent(slug: str):
    agent = agent_by_slug(slug=slug)
    if agent is None:
        raise Http404("No chat here.")
    return agent


@xframe_options_exempt
def chat_page(request, slug: str):
    agent = _agent(slug)
    description = (agent.config or {}).get("description", "")
    response = render(
        request,
        "widget/chat.html",
        {
            "agent": agent,
            "description": description if isinstance(description, str) else "",
            "max_input": settings.THREADLESS_END_USER_MAX_INPUT_CHARS,
        },
    )
    response["Content-Security-Policy"] = _csp(agent.allowed_origins)
    response["Referrer-Policy"] = "no-referrer"
    response["Cache-Control"] = "no-store"
    return response
