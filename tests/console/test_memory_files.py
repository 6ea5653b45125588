"""The console's Files tab of a memory: files, their versions and who wrote them, escaped, scoped."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.test import Client

from memories.services import memory_create
from memories.services.files import file_command


def _notes(project):
    memory, _ = memory_create(project=project)
    file_command(
        memory=memory,
        actor="tl_proj_writer1",
        command={
            "command": "create",
            "path": "/memories/people/ann.md",
            "file_text": "Ann <script>alert(1)</script>\n",
        },
    )
    file_command(
        memory=memory,
        actor="tl_proj_writer2",
        command={
            "command": "str_replace",
            "path": "/memories/people/ann.md",
            "old_str": "Ann",
            "new_str": "Ann Smith",
        },
    )
    file_command(
        memory=memory,
        actor="tl_proj_writer2",
        command={"command": "create", "path": "/memories/old.md", "file_text": "gone soon"},
    )
    file_command(
        memory=memory, actor="tl_proj_writer3", command={"command": "delete", "path": "/memories/old.md"}
    )
    return memory


def test_the_files_tab_lists_files_versions_and_who_changed_them(cast, staff_client):
    memory = _notes(cast.project_a)
    page = staff_client.get(f"/manage/memories/{memory.pk}/?tab=files").content.decode()
    assert "/memories/people/ann.md" in page and "version 2" in page
    assert "Ann Smith &lt;script&gt;" in page and "<script>alert(1)" not in page  # escaped
    assert "Version 1 · by tl_proj_writer1 · replaced by str_replace from tl_proj_writer2" in page
    assert "Deleted files" in page and "/memories/old.md" in page and "deleted by tl_proj_writer3" in page


def test_the_files_tab_of_another_projects_memory_is_404(cast):
    memory = _notes(cast.project_b)
    outsider = get_user_model().objects.create_user("outsider", password="outsider-pass-1", is_staff=True)
    cast.project_a.members.add(outsider)
    client = Client()
    client.force_login(outsider)
    assert client.get(f"/manage/memories/{memory.pk}/?tab=files").status_code == 404
