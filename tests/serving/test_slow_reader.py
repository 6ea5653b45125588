"""A client that opens a large export and never reads it (a real uvicorn, a raw socket): the
process's other sync routes answer as usual, on SQLite's one view thread."""

from __future__ import annotations

import socket

import pytest

pytestmark = pytest.mark.services


def test_an_export_nobody_reads_leaves_the_other_routes_answering(live_server_proc):
    with live_server_proc.client() as client:
        memory_id = client.post("/memories", json={}).json()["id"]
        text = "lorem ipsum dolor sit amet " * 30_000  # ~800 KB a report
        for _ in range(12):  # ~10 MB of export: more than the socket buffers take
            decorate = client.post(
                f"/memories/{memory_id}/decorate", json={"messages": [{"role": "user", "content": "go"}]}
            )
            assert decorate.status_code == 200
            report = client.post(
                f"/memories/{memory_id}/report", json={"messages": [{"role": "assistant", "content": text}]}
            )
            assert report.status_code == 202
        slow = socket.create_connection(("127.0.0.1", live_server_proc.port), timeout=30)
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            slow.sendall(
                (
                    f"GET /v1/memories/{memory_id}/export HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    f"Authorization: Bearer {live_server_proc.key}\r\n\r\n"
                ).encode()
            )
            assert slow.recv(1024).startswith(b"HTTP/1.1 200")  # the export has begun; then no more reads
            for _ in range(3):
                assert client.get(f"/memories/{memory_id}", timeout=10).status_code == 200
                assert client.get(live_server_proc.url + "/healthz", timeout=10).status_code == 200
        finally:
            slow.close()
