"""Who gets in: staff only; everybody else is sent to sign in or refused."""

from __future__ import annotations

import pytest
from django.test import Client

PAGES = ["/manage/", "/manage/projects/", "/manage/memories/", "/manage/digests/", "/manage/agents/"]


@pytest.mark.parametrize("path", PAGES)
def test_anonymous_visitors_are_sent_to_sign_in(db, path):
    response = Client().get(path)
    assert response.status_code == 302
    assert response["Location"].startswith("/manage/login/?next=")


@pytest.mark.parametrize("path", PAGES)
def test_a_signed_in_non_staff_user_is_refused(user_client, path):
    response = user_client.get(path)
    assert response.status_code == 403
    assert b"No staff access" in response.content
    assert b"Alpha" not in response.content


@pytest.mark.parametrize("path", PAGES)
def test_staff_see_every_page(staff_client, path):
    assert staff_client.get(path).status_code == 200


def test_login_page_signs_staff_in(cast):
    client = Client(enforce_csrf_checks=True)
    page = client.get("/manage/login/")
    assert page.status_code == 200
    token = page.cookies["csrftoken"].value
    response = client.post(
        "/manage/login/", {"username": "staff", "password": "staff-pass-123", "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302 and response["Location"] == "/manage/"
    assert client.get("/manage/").status_code == 200


def test_login_refuses_a_non_staff_account(cast):
    response = Client().post("/manage/login/", {"username": "visitor", "password": "visitor-pass-123"})
    assert response.status_code == 200
    assert b"no staff access" in response.content


def test_login_without_csrf_token_is_rejected(cast):
    client = Client(enforce_csrf_checks=True)
    response = client.post("/manage/login/", {"username": "staff", "password": "staff-pass-123"})
    assert response.status_code == 403


def test_console_pages_cannot_be_framed(staff_client):
    assert staff_client.get("/manage/")["X-Frame-Options"] == "DENY"


def test_every_form_carries_a_csrf_token_and_htmx_gets_the_header(staff_client, cast, failed_memory):
    for path in [
        f"/manage/projects/{cast.project_a.pk}/",
        f"/manage/memories/{failed_memory.pk}/?tab=facts",
        "/manage/projects/",
    ]:
        html = staff_client.get(path).content.decode()
        assert html.count("<form") == html.count('name="csrfmiddlewaretoken"') + html.count('method="get"')
        assert 'hx-headers=\'{"X-CSRFToken": "' in html


def test_a_post_without_csrf_is_refused(cast):
    client = Client(enforce_csrf_checks=True)
    client.force_login(cast.staff)
    response = client.post("/manage/projects/", {"name": "Sneaky"})
    assert response.status_code == 403


def test_sign_out(staff_client):
    assert staff_client.post("/manage/logout/").status_code == 302
    assert staff_client.get("/manage/").status_code == 302
