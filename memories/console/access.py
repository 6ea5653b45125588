"""Who may use the Manager console: signed-in staff only.

An anonymous visitor is sent to the login page; a signed-in user without staff rights is
refused with 403 (never redirected in a loop, never shown any data).
"""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.shortcuts import render


def staff_required(view):
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        user = request.user
        if not user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not (user.is_active and user.is_staff):
            return render(request, "console/no_access.html", status=403)
        return view(request, *args, **kwargs)

    return wrapper
