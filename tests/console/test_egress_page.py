"""The operators' egress allow list page: an entry added there lets the next call through without a
restart, every change is audited, and nobody without operator rights can open or post it."""

from __future__ import annotations

import re

import orjson
import pytest
from asgiref.sync import async_to_sync
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.test import AsyncClient, Client

from harness.proxy_stubs import ProviderStub
from providers.models import EgressAllowEntry

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def stub():
    server = ProviderStub()
    yield server
    server.close()


@pytest.fixture
def operator():
    return get_user_model().objects.create_user(
        "root", password="root-pass-12345", is_staff=True, is_superuser=True
    )


def proxy_call(cast, stub):
    response = async_to_sync(AsyncClient().post)(
        "/v1/openai/chat/completions",
        orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
        content_type="application/json",
        headers={
            "Authorization": f"Bearer {cast.key_a}",
            "X-Upstream-Base-Url": stub.openai_url,
            "X-Upstream-Authorization": "sk-stub",
        },
    )
    return response.status_code, orjson.loads(response.content)


def test_an_entry_the_operator_adds_lets_the_next_call_through_and_is_audited(cast, stub, operator, settings):
    settings.THREADLESS_EGRESS_ALLOW = []
    status, body = proxy_call(cast, stub)
    assert status == 502 and "adds 127.0.0.1 to THREADLESS_EGRESS_ALLOW" in body["error"]["message"]
    console = Client(enforce_csrf_checks=True)
    console.force_login(operator)
    page = console.get("/manage/egress/")
    assert page.status_code == 200 and b'href="/manage/egress/"' in page.content  # in the nav too
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.content).group(1).decode()
    assert console.post("/manage/egress/", {"value": "127.0.0.1"}).status_code == 403  # no CSRF token
    added = console.post(
        "/manage/egress/", {"value": "127.0.0.1", "note": "<b>local stub</b>", "csrfmiddlewaretoken": token}
    )
    assert added.status_code == 302
    assert proxy_call(cast, stub)[0] == 200 and len(stub.requests) == 1  # no restart
    shown = console.get("/manage/egress/").content.decode()
    assert "&lt;b&gt;local stub&lt;/b&gt;" in shown and "<b>local stub" not in shown
    assert "root · Allowed egress to 127.0.0.1." in shown
    entry = EgressAllowEntry.objects.get()
    log = LogEntry.objects.get(object_id=str(entry.pk))
    assert log.user == operator and log.is_addition()
    removed = console.post("/manage/egress/", {"remove": entry.pk, "csrfmiddlewaretoken": token})
    assert removed.status_code == 302 and proxy_call(cast, stub)[0] == 502
    assert LogEntry.objects.filter(object_id=str(entry.pk), action_flag=3, user=operator).exists()


def test_a_bad_entry_is_400_naming_what_is_expected(operator):
    console = Client()
    console.force_login(operator)
    for value in ("0.0.0.0/0", "not a host!", "a" * 64 + ".internal"):
        answer = console.post("/manage/egress/", {"value": value})
        assert answer.status_code == 400, value
    assert not EgressAllowEntry.objects.exists() and not LogEntry.objects.exists()


def test_nobody_without_operator_rights_can_open_or_change_the_list(cast):
    project_staff = Client()
    project_staff.force_login(cast.staff)
    page = project_staff.get("/manage/egress/")
    assert page.status_code == 403 and b"Only the server's operators" in page.content
    assert project_staff.post("/manage/egress/", {"value": "10.0.0.0/8"}).status_code == 403
    assert b'href="/manage/egress/"' not in project_staff.get("/manage/").content
    visitor = Client()
    visitor.force_login(cast.user)
    assert visitor.post("/manage/egress/", {"value": "10.0.0.0/8"}).status_code == 403
    assert Client().get("/manage/egress/").status_code == 302  # to sign in
    assert cast.a.get("/v1/egress").status_code == 404  # no API: a project key reaches nothing
    assert not EgressAllowEntry.objects.exists()
