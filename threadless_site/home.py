"""`/` and `/favicon.ico`: where someone lands who opens the server's address.

Console staff go to the Manager console; anyone else gets a short page saying what this server is
and where its API, docs and console are. Nothing here reads project data.
"""

from __future__ import annotations

from django.http import HttpResponseRedirect
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.views.decorators.http import require_safe


@require_safe
def home(request):
    if request.user.is_authenticated and request.user.is_staff:
        return redirect("console:overview")
    return render(request, "site/home.html")


@require_safe
def favicon(request):
    return HttpResponseRedirect(static("favicon.svg"))
