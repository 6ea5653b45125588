"""The headers Django's security middlewares add to every answer (nosniff, referrer policy,
frame options, HSTS when set), for the answers the serving layer sends without Django's
middleware chain: the hot routes' and the body limit's 413. Computed by those middlewares
themselves, so the settings that shape them hold here too."""

from __future__ import annotations


def security_headers(path: str = "/") -> list[tuple[bytes, bytes]]:
    from django.conf import settings
    from django.http import HttpRequest, HttpResponse
    from django.middleware.clickjacking import XFrameOptionsMiddleware
    from django.middleware.security import SecurityMiddleware

    request, response = HttpRequest(), HttpResponse()
    request.path = request.path_info = path
    if "django.middleware.security.SecurityMiddleware" in settings.MIDDLEWARE:
        response = SecurityMiddleware(lambda r: response).process_response(request, response)
    if "django.middleware.clickjacking.XFrameOptionsMiddleware" in settings.MIDDLEWARE:
        response = XFrameOptionsMiddleware(lambda r: response).process_response(request, response)
    return [
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in response.items()
        if name.lower() != "content-type"
    ]
