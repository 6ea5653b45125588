"""Fixtures for the console view tests: signed-in clients and a memory with a failed turn."""

from __future__ import annotations

import pytest
from django.test import Client

from memories.services import memory_create, memory_decorate, report_accept

POLICY = {"strictWriteDiscipline": {"enabled": True, "onFailure": "digest"}}
RAW = "java.net.ConnectException: Connection refused to https://weather.example/api?key=sk-abcdefghijklmnopqrstu"


@pytest.fixture
def staff_client(cast) -> Client:
    client = Client()
    client.force_login(cast.staff)
    return client


@pytest.fixture
def user_client(cast) -> Client:
    client = Client()
    client.force_login(cast.user)
    return client


@pytest.fixture
def failed_memory(cast):
    """A memory in project A: one turn with a reply, one turn whose 'weather' task failed."""
    memory, _ = memory_create(
        project=cast.project_a, metadata={"user": "<b>ann</b>"}, external_id="ann", policy=POLICY
    )
    memory_decorate(memory=memory, messages=[{"role": "user", "content": "Hello <script>alert(1)</script>"}])
    report_accept(memory=memory, messages=[{"role": "assistant", "content": "Hi Ann."}], failures=[])
    memory_decorate(memory=memory, messages=[{"role": "user", "content": "What's the weather?"}])
    report_accept(
        memory=memory,
        messages=[],
        failures=[{"task_id": "weather", "error": RAW, "output": {"status": 503}, "has_output": True}],
    )
    memory.refresh_from_db()
    return memory
