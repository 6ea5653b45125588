"""ASGI entry point: `uvicorn threadless_site.asgi:application` (production: threadless_site.serve).

Sync views (the /v1 memory API, the console) run on a pool of THREADLESS_WEB_THREADS threads
per process through Django's WSGI handler (threadless_site.syncviews: one hand-off to the thread
and one back per request), so one process has several requests in flight while they wait on the
database; under plain ASGI Django runs every sync view of a process on one thread. Async views (the conversation routes and their SSE streams) stay on
Django's ASGI handler. THREADLESS_WEB_THREADS=0 sends everything to the ASGI handler.

Graceful shutdown: the ASGI lifespan shutdown (uvicorn's SIGTERM handling) tells running turns to
stop at their next task boundary (see common.shutdown), so they end EXECUTION_INTERRUPTED.
Request bodies pass the body limit first (threadless_site.bodylimit, also in syncviews): 413 as
soon as the limit is passed.
"""

import os
from functools import lru_cache

from django.conf import settings
from django.core.asgi import get_asgi_application

from common.shutdown import begin_shutdown
from common.sigterm import install_if_uvicorn
from threadless_site.bodylimit import BodyLimitMiddleware

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
django_application = get_asgi_application()

from asgiref.sync import iscoroutinefunction  # noqa: E402 - after Django is set up
from django.urls import Resolver404, resolve  # noqa: E402


def _body_limit() -> int:
    return settings.THREADLESS_MAX_BODY_BYTES


sync_application = None
if settings.THREADLESS_WEB_THREADS > 0:
    from django.core.wsgi import get_wsgi_application

    from threadless_site.syncviews import SyncViews

    sync_application = SyncViews(get_wsgi_application(), settings.THREADLESS_WEB_THREADS, _body_limit)


@lru_cache(maxsize=4096)
def is_async_route(path: str) -> bool:
    """Whether `path` resolves to an async view (those stay on the ASGI handler)."""
    try:
        match = resolve(path)
    except Resolver404:
        return False
    return iscoroutinefunction(match.func)


def _sized(scope) -> bool:
    """A body without Content-Length (chunked) stays on the ASGI handler: WSGI would read it as
    empty, and common.http.middleware reads it up to the body limit there (413 over the limit)."""
    if scope["method"] in ("GET", "HEAD", "OPTIONS"):
        return True
    return any(name == b"content-length" for name, _ in scope["headers"])


# Every HTTP request passes the body-limit guard before Django reads (and spools) its body.
guarded_application = BodyLimitMiddleware(django_application, _body_limit)


async def application(scope, receive, send):
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                # uvicorn sets its signal handlers after loading the app: chain the shutdown flag
                # in front of them now, so running turns notice SIGTERM at once (common.sigterm).

                install_if_uvicorn()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await begin_shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return
    elif scope["type"] == "http" and sync_application is not None and _sized(scope) \
            and not is_async_route(scope["path"]):
        await sync_application(scope, receive, send)
    else:
        await guarded_application(scope, receive, send)
