"""Projects and keys: create, key shown once, revoke, plan and limits."""

from __future__ import annotations

from projects.auth import key_from_plaintext
from projects.models import ApiKey, Project


def test_staff_create_a_project_with_limits(staff_client):
    response = staff_client.post(
        "/manage/projects/", {"name": "Gamma", "rate_limit_per_minute": "60", "allowance_memories": "10"}
    )
    project = Project.objects.get(name="Gamma")
    assert response.status_code == 302 and response["Location"] == f"/manage/projects/{project.pk}/"
    assert project.rate_limit_per_minute == 60 and project.allowance_memories == 10
    assert project.allowance_requests_per_month is None


def test_a_project_needs_a_name(staff_client):
    response = staff_client.post("/manage/projects/", {"name": "   "})
    assert response.status_code == 400
    assert b"Give the project a name" in response.content


def test_a_new_key_is_shown_once_and_works(staff_client, cast):
    url = f"/manage/projects/{cast.project_a.pk}/keys/"
    response = staff_client.post(url, {"kind": "project", "name": "backend"})
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    key = ApiKey.objects.get(project=cast.project_a, name="backend")
    html = response.content.decode()
    start = html.index('id="new-key" readonly value="') + len('id="new-key" readonly value="')
    plaintext = html[start : html.index('"', start)]
    assert plaintext.startswith(key.prefix) and len(plaintext) > len(key.prefix) + 10
    assert key_from_plaintext(plaintext).pk == key.pk
    assert "only time it is shown" in html and 'data-copy="new-key"' in html
    again = staff_client.get(f"/manage/projects/{cast.project_a.pk}/").content.decode()
    assert plaintext not in again and key.prefix in again


def test_key_creation_through_htmx_renders_only_the_keys_section(staff_client, cast):
    response = staff_client.post(
        f"/manage/projects/{cast.project_a.pk}/keys/", {"kind": "project"}, HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<section class="card" id="keys"') and "<html" not in html


def test_a_publishable_key_needs_an_agent(staff_client, cast):
    response = staff_client.post(f"/manage/projects/{cast.project_a.pk}/keys/", {"kind": "publishable"})
    assert response.status_code == 400
    assert b"belongs to one agent" in response.content
    assert not ApiKey.objects.filter(project=cast.project_a, kind="publishable").exists()


def test_revoking_a_key(staff_client, cast):
    key = ApiKey.objects.get(project=cast.project_a)
    response = staff_client.post(f"/manage/projects/{cast.project_a.pk}/keys/{key.pk}/revoke/")
    assert response.status_code == 302
    key.refresh_from_db()
    assert key.revoked_at is not None
    assert cast.a.get("/v1/memories").status_code == 401


def test_a_key_of_another_project_cannot_be_revoked_through_this_one(staff_client, cast):
    key_b = ApiKey.objects.get(project=cast.project_b)
    response = staff_client.post(f"/manage/projects/{cast.project_a.pk}/keys/{key_b.pk}/revoke/")
    assert response.status_code == 404
    key_b.refresh_from_db()
    assert key_b.revoked_at is None


def test_revoke_needs_post(staff_client, cast):
    key = ApiKey.objects.get(project=cast.project_a)
    assert staff_client.get(f"/manage/projects/{cast.project_a.pk}/keys/{key.pk}/revoke/").status_code == 405


def test_plan_and_rate_limit_are_editable(staff_client, cast):
    response = staff_client.post(
        f"/manage/projects/{cast.project_a.pk}/",
        {"name": "Alpha", "rate_limit_per_minute": "0", "allowance_requests_per_month": "5000"},
    )
    assert response.status_code == 302
    cast.project_a.refresh_from_db()
    assert cast.project_a.rate_limit_per_minute == 0
    assert cast.project_a.allowance_requests_per_month == 5000


def test_a_bad_limit_is_shown_next_to_its_field(staff_client, cast):
    response = staff_client.post(
        f"/manage/projects/{cast.project_a.pk}/", {"name": "Alpha", "rate_limit_per_minute": "-3"}
    )
    assert response.status_code == 400
    assert b"greater than or equal to 0" in response.content


def test_unknown_project_is_404(staff_client):
    assert staff_client.get("/manage/projects/prj_nope/").status_code == 404
    assert staff_client.post("/manage/projects/prj_nope/keys/", {"kind": "project"}).status_code == 404


def test_project_names_are_escaped(staff_client):
    staff_client.post("/manage/projects/", {"name": "<img src=x onerror=alert(1)>"})
    html = staff_client.get("/manage/projects/").content.decode()
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_the_project_page_counts_requests_without_a_plan_allowance(staff_client, cast):
    assert cast.project_a.allowance_requests_per_month is None
    for _ in range(3):
        assert cast.api(cast.key_a).get("/v1/memories").status_code == 200
    html = staff_client.get(f"/manage/projects/{cast.project_a.pk}/").content.decode()
    assert "3 requests in" in html
