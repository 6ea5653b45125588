"""`/` and `/favicon.ico`: where someone who opens the server's address lands."""

from __future__ import annotations

from django.test import Client


def test_a_visitor_sees_what_this_server_is_and_where_the_docs_are(db):
    response = Client().get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "This is a Threadless server" in html
    assert 'href="/v1/docs"' in html and 'href="/manage/login/"' in html and "README.md" in html


def test_a_non_staff_user_gets_the_same_page(cast):
    client = Client()
    client.force_login(cast.user)
    assert "This is a Threadless server" in client.get("/").content.decode()


def test_staff_go_to_the_console(cast):
    client = Client()
    client.force_login(cast.staff)
    response = client.get("/")
    assert response.status_code == 302 and response["Location"] == "/manage/"


def test_the_favicon_is_served(db):
    response = Client().get("/favicon.ico")
    assert response.status_code == 302
    icon = Client().get(response["Location"])
    assert icon.status_code == 200 and b"<svg" in b"".join(icon.streaming_content)
