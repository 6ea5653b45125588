"""Manager console pages for agents: list, config editor, secret store and the Manager chat."""

from __future__ import annotations

from django.shortcuts import render

from memories.console.access import staff_required


@staff_required
def agents(request):
    return render(request, "chat_console/agents.html", {"section": "agents", "agents": []})
