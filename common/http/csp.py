"""The Content-Security-Policy of the HTML pages: the console, the sign-in page, the home page,
Django's admin and error pages (the end-user chat page sets its own, with the frame ancestors its
agent allows).

The policy (settings.CONTENT_SECURITY_POLICY) loads scripts, styles, images and connections from
this origin only: no inline script, no inline style attribute, no `eval`, so markup that reaches a
page by mistake cannot run. The templates keep to that (behaviour in static/*.js, styles in
static/*.css; htmx is told not to inject its indicator styles nor evaluate anything). A view whose
page cannot keep to it (the API reference, a third-party page with an inline script) opts out
with `csp_exempt`.
"""

from __future__ import annotations

from functools import wraps

from django.conf import settings

from common.http.middleware import SyncAndAsyncMiddleware

HEADER = "Content-Security-Policy"


def policy(*, frame_ancestors: str = "'none'") -> str:
    """The policy, with who may frame the page (`'none'`: nobody, as X-Frame-Options: DENY)."""
    return f"{settings.CONTENT_SECURITY_POLICY}; frame-ancestors {frame_ancestors}"


def csp_exempt(view):
    """A view whose HTML is sent without the policy."""

    @wraps(view)
    def exempt(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        response.csp_exempt = True
        return response

    return exempt


class ContentSecurityPolicyMiddleware(SyncAndAsyncMiddleware):
    """Adds the policy to every HTML answer that has none of its own and is not exempt."""

    def after(self, request, response):
        if (
            HEADER not in response
            and not getattr(response, "csp_exempt", False)
            and response.get("Content-Type", "").startswith("text/html")
        ):
            response[HEADER] = policy()
        return response
