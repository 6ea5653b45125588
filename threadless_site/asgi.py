"""ASGI entry point: `uvicorn threadless_site.asgi:application`.

Graceful shutdown: the ASGI lifespan shutdown (uvicorn's SIGTERM handling) tells running turns to
stop at their next task boundary (see common.shutdown), so they end EXECUTION_INTERRUPTED.
Request bodies pass threadless_site.bodylimit first: 413 as soon as the limit is passed.
"""

import os

from django.conf import settings
from django.core.asgi import get_asgi_application

from common.shutdown import begin_shutdown
from common.sigterm import install_if_uvicorn
from threadless_site.bodylimit import BodyLimitMiddleware

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")
django_application = get_asgi_application()


def _body_limit() -> int:
    return settings.THREADLESS_MAX_BODY_BYTES


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
    else:
        await guarded_application(scope, receive, send)
