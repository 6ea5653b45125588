"""The end-user chat page (/chat/<agent-slug>/).

The page is static HTML + a script that talks to /v1 with the agent's publishable key and the
conversation's client token (fetch, no cookies). It never receives provider text: the API
strips it for publishable keys, and this view renders nothing but the agent's name.
Framing: only the agent's `allowedOrigins` may embed it (the HTML pages' Content-Security-Policy,
common.http.csp, with those origins as its frame ancestors).
"""

from __future__ import annotations

from django.conf import settings
from django.http import Http404
from django.shortcuts import render
from django.views.decorators.clickjacking import xframe_options_exempt

from chat.selectors import agent_by_slug
from common.http import csp


def _agent(slug: str):
    agent = agent_by_slug(slug=slug)
    if agent is None:
        raise Http404("No chat here.")
    return agent


@xframe_options_exempt
def chat_page(request, slug: str):
    agent = _agent(slug)
    # The agent's name only: its config (the description too) is written for staff.
    response = render(
        request,
        "widget/chat.html",
        {"agent": agent, "max_input": settings.THREADLESS_END_USER_MAX_INPUT_CHARS},
    )
    ancestors = " ".join(agent.allowed_origins) if agent.allowed_origins else "'none'"
    response[csp.HEADER] = csp.policy(frame_ancestors=ancestors)
    response["Referrer-Policy"] = "no-referrer"
    response["Cache-Control"] = "no-store"
    return response
