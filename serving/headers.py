"""The headers Django's security middlewares add to every answer (nosniff, referrer policy,
frame options, HSTS when set), for the answers the serving layer sends without Django's
middleware chain: the hot routes', the proxy's and the body limit's 413. Computed by those
middlewares themselves, so the settings that shape them hold here too. And the Host check those
routes must pass first (`host_allowed`), by Django's own `get_host`."""

from __future__ import annotations

from functools import lru_cache


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
    """Whether Django would take this request's Host (ALLOWED_HOSTS, USE_X_FORWARDED_HOST, DEBUG),
    asked of Django's own `HttpRequest.get_host` with the headers an ASGIRequest would give it."""
    from django.conf import settings

    server = scope.get("server") or ("unknown", "0")
    host = forwarded = None
    for name, value in scope.get("headers") or ():
        if name == b"host":
            host = value if host is None else host + b"," + value
        elif name == b"x-forwarded-host":
            forwarded = value if forwarded is None else forwarded + b"," + value
    return _host_verdict(
        host,
        forwarded,
        (str(server[0]), str(server[1])),
        tuple(settings.ALLOWED_HOSTS),
        settings.USE_X_FORWARDED_HOST,
        settings.DEBUG,
    )


@lru_cache(maxsize=256)
def _host_verdict(host, forwarded, server, allowed, use_forwarded, debug) -> bool:
    """`host_allowed` for one set of inputs (the settings among them): a client sends the same Host
    on every call, and Django's request object costs more than the rest of the check."""
    from django.core.exceptions import DisallowedHost
    from django.http import HttpRequest

    request = HttpRequest()
    request.META = {"SERVER_NAME": server[0], "SERVER_PORT": server[1]}
    if host is not None:
        request.META["HTTP_HOST"] = host.decode("latin-1")
    if forwarded is not None:
        request.META["HTTP_X_FORWARDED_HOST"] = forwarded.decode("latin-1")
    try:
        request.get_host()
    except DisallowedHost:
        return False
    return True
