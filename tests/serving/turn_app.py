"""A tiny ASGI app for the graceful-stop test: Threadless's lifespan, and a "turn" that checks the
shutdown flag every 0.1 s (as turn runners do at each task boundary) for up to 30 s."""

import asyncio
import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "threadless_site.settings")

from common.shutdown import shutting_down  # noqa: E402
from threadless_site import asgi  # noqa: E402


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await asgi.application(scope, receive, send)
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    if scope["path"] == "/healthz":
        await send({"type": "http.response.body", "body": b"ok", "more_body": False})
        return
    for _ in range(300):
        if shutting_down():
            await send({"type": "http.response.body", "body": b"interrupted", "more_body": False})
            return
        await asyncio.sleep(0.1)
    await send({"type": "http.response.body", "body": b"ran to the end", "more_body": False})
