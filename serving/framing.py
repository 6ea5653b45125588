"""ASGI guard: a request that gives its body's length two ways is refused before any view sees it.

A request with both `Transfer-Encoding` and `Content-Length` is request smuggling's shape (RFC 9112
§6.3: such a message "ought to be handled as an error"): a proxy in front that trusts the other
header than the server does sees another end of the body, and the rest of the body becomes a second
request on the same connection. Servers differ: uvicorn's h11 parser passes both headers on, reads
the body as chunked and keeps the connection open (the bytes after the chunked body are then served
as a request of their own); granian drops the Content-Length, reads the body as chunked and closes
the connection after its answer (this guard never sees those); uvicorn's httptools parser refuses
the request itself. Whatever reaches the ASGI entry with both headers is answered 400 here, in the
API's error shape, with `Connection: close`. Several Content-Length headers that disagree never get
this far (the servers refuse them).
"""

from __future__ import annotations

from serving.bodylimit import send_error


def ambiguous_length(scope) -> bool:
    """Whether the request carries both a Transfer-Encoding and a Content-Length header."""
    names = {name.lower() for name, _ in scope.get("headers") or ()}
    return b"transfer-encoding" in names and b"content-length" in names


async def send_refusal(send, scope) -> None:
    await send_error(
        send,
        scope,
        status=400,
        code="invalid_request",
        message="The request has both Transfer-Encoding and Content-Length headers.",
        hint="Send one of the two: Content-Length for a body of known size, or a chunked body.",
    )
