"""ASGI guard: the request body limit holds while the body is being read, on every route.

Django's ASGI handler spools the whole body before any middleware runs, so a limit checked there
comes after a 30 MB upload has been read. This wrapper sits in front of Django: a Content-Length
over the limit is answered 413 before a byte of the body is read; otherwise it counts the bytes
of the `http.request` messages as Django pulls them and, as soon as the count passes the limit,
sends the 413 itself (with `Connection: close`, so the server stops reading) and tells Django
the client went away, which makes Django drop the request without a response of its own.

The answer is the SPEC §4.1 error shape (`payload_too_large`), under /v1 and everywhere else,
with the security headers Django's middleware gives every other answer (`serving.headers`).
"""

from __future__ import annotations

import secrets

import orjson

from serving.headers import security_headers

CODE = "payload_too_large"


def request_id_of(scope) -> str:
    """The request's X-Request-Id when it is acceptable (as common.http.middleware), else a new one."""
    for name, value in scope.get("headers") or ():
        if name == b"x-request-id":
            incoming = value.decode("latin-1")
            if 8 <= len(incoming) <= 64 and incoming.replace("_", "").replace("-", "").isalnum():
                return incoming
    return "req_" + secrets.token_hex(12)


def _declared_length(scope) -> int | None:
    for name, value in scope.get("headers") or ():
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


async def send_error(send, scope, *, status: int, code: str, message: str, hint: str) -> None:
    """An answer the serving layer gives before Django sees the request: the SPEC §4.1 error shape,
    the security headers, and `Connection: close` (the server reads nothing more of this
    connection)."""
    request_id = request_id_of(scope)
    body = orjson.dumps(
        {
            "error": {
                "code": code,
                "message": message,
                "hint": hint,
                "request_id": request_id,
                "retryable": False,
            }
        }
    )
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"x-request-id", request_id.encode()),
                (b"connection", b"close"),
                *security_headers(scope.get("path") or "/"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def send_too_large(send, scope, limit: int) -> None:
    await send_error(
        send,
        scope,
        status=413,
        code=CODE,
        message=f"The body is larger than the limit of {limit} bytes.",
        hint="Send a smaller body, or split the messages over several calls.",
    )


class BodyLimitMiddleware:
    """Wrap an ASGI app; `limit` is a callable so tests can change the setting at run time."""

    def __init__(self, app, limit):
        self.app = app
        self.limit = limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit()
        declared = _declared_length(scope)
        if declared is not None and declared > limit:
            await send_too_large(send, scope, limit)
            return
        seen = 0
        refused = False

        async def guarded_receive():
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    refused = True
                    await send_too_large(send, scope, limit)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message):
            if not refused:  # after our 413, nothing Django might still say goes out
                await send(message)

        await self.app(scope, guarded_receive, guarded_send)
