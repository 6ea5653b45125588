"""The request-handler base every local stub server shares: HTTP/1.1 keep-alive, no access log,
TCP_NODELAY (without it a small answer waits ~40 ms on Nagle's algorithm)."""

from __future__ import annotations

import socket
from http.server import BaseHTTPRequestHandler


class StubHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
