"""The headers Django's security middlewares add to every answer (nosniff, referrer policy,
frame options, HSTS when set), for the answers the serving layer sends without Django's
middleware chain: the hot routes', the proxy's and the body limit's 413. Computed by those
middlewares themselves, so the settings that shape them hold here too. And the Host check those
routes must pass first (`host_allowed`), by Django's own `get_host`."""

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


def host_allowed(scope) -> bool:
    """Whether Django would take this request's Host (ALLOWED_HOSTS, USE_X_FORWARDED_HOST), asked
    of Django's own `HttpRequest.get_host` with the headers an ASGIRequest would give it."""
    from django.core.exceptions import DisallowedHost
    from django.http import HttpRequest

    server = scope.get("server") or ("unknown", "0")
    meta = {"SERVER_NAME": str(server[0]), "SERVER_PORT": str(server[1])}
    for name, value in scope.get("headers") or ():
        if name in (b"host", b"x-forwarded-host"):
            key = "HTTP_" + name.decode("latin-1").upper().replace("-", "_")
            text = value.decode("latin-1")
            meta[key] = f"{meta[key]},{text}" if key in meta else text
    request = HttpRequest()
    request.META = meta
    try:
        request.get_host()
    except DisallowedHost:
        return False
    return True
