"""The `django.request` log line for the answers the serving layer sends without Django's handler
(the hot routes, the proxy's model calls)."""

from __future__ import annotations

import io
import logging


def log_error_answer(scope, body: bytes, status: int) -> None:
    """The line Django's handler writes for an answer of 400 and up (an error for a 5xx, a warning
    for a 4xx: settings.LOGGING lets errors through), with the same message, level and extras
    (status_code, the request), through Django's own `log_response`. The request is only built
    when the line will be written."""
    from django.core.handlers.asgi import ASGIRequest
    from django.http import HttpResponse
    from django.utils.log import log_response, request_logger

    if status < 400 or not request_logger.isEnabledFor(logging.ERROR if status >= 500 else logging.WARNING):
        return
    response = HttpResponse(status=status)
    request = ASGIRequest(scope, io.BytesIO(body))
    log_response("%s: %s", response.reason_phrase, request.path, response=response, request=request)
