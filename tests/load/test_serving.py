"""The production server setup (issue 17): who serves which route, and how many processes."""

from __future__ import annotations

import os

from threadless_site import serve
from threadless_site.asgi import _sized, is_async_route, sync_application


def test_the_memory_api_and_the_console_run_on_the_thread_pool_and_conversations_stay_async():
    assert sync_application is not None  # THREADLESS_WEB_THREADS defaults to 8
    for path in ("/v1/memories", "/v1/memories/mem_x/decorate", "/v1/memories/mem_x/report", "/healthz",
                 "/manage/", "/no/such/page"):
        assert not is_async_route(path), path
    for path in ("/v1/agents/agt_x/conversations", "/v1/conversations/cv_x/say",
                 "/v1/conversations/cv_x/turns/3/events"):
        assert is_async_route(path), path


def test_a_body_without_content_length_stays_on_the_asgi_handler():
    chunked = {"method": "POST", "headers": [(b"transfer-encoding", b"chunked")]}
    sized = {"method": "POST", "headers": [(b"content-length", b"12")]}
    assert not _sized(chunked)
    assert _sized(sized)
    assert _sized({"method": "GET", "headers": []})


def test_the_server_starts_one_process_per_cpu_unless_told(monkeypatch):
    monkeypatch.delenv("THREADLESS_WEB_WORKERS", raising=False)
    assert serve.default_workers() == (os.cpu_count() or 1)
    monkeypatch.setenv("THREADLESS_WEB_WORKERS", "3")
    assert serve.default_workers() == 3
