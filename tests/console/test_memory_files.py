"""The console's Files tab of a memory: files, their versions and who wrote them, escaped, scoped."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.test import Client

from memories.models import MemoryFileVersion
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
    assert "/memories/people/ann.md" in page and "version 2" in page and "1 earlier version kept" in page
    assert "Deleted files" in page and "/memories/old.md" in page and "deleted by tl_proj_writer3" in page
    opened = staff_client.get(f"/manage/memories/{memory.pk}/?tab=files&path=people/ann.md").content.decode()
    assert "Ann Smith &lt;script&gt;" in opened and "<script>alert(1)" not in opened  # escaped
    assert "by tl_proj_writer1 · replaced by str_replace from tl_proj_writer2" in opened
    deleted = staff_client.get(f"/manage/memories/{memory.pk}/?tab=files&path=old.md").content.decode()
    assert "by tl_proj_writer2 · replaced by delete from tl_proj_writer3" in deleted


def test_the_files_tab_of_another_projects_memory_is_404(cast):
    memory = _notes(cast.project_b)
    outsider = get_user_model().objects.create_user("outsider", password="outsider-pass-1", is_staff=True)
    cast.project_a.members.add(outsider)
    client = Client()
    client.force_login(outsider)
    assert client.get(f"/manage/memories/{memory.pk}/?tab=files").status_code == 404


def _big_history(project):
    memory, _ = memory_create(project=project)
    file_command(
        memory=memory,
        actor="tl_proj_writer1",
        command={"command": "create", "path": "/memories/big.md", "file_text": "v0 " + "x" * 20_000 + "\n"},
    )
    for n in range(1, 4):
        file_command(
            memory=memory,
            actor="tl_proj_writer1",
            command={
                "command": "str_replace",
                "path": "/memories/big.md",
                "old_str": f"v{n - 1} ",
                "new_str": f"v{n} ",
            },
        )
    return memory


def test_the_files_tab_lists_paths_and_sizes_without_their_content(cast, staff_client):
    memory = _big_history(cast.project_a)
    page = staff_client.get(f"/manage/memories/{memory.pk}/?tab=files").content.decode()
    assert "/memories/big.md" in page and "20004 bytes" in page
    assert "x" * 100 not in page and len(page) < 20_000


def test_one_file_or_one_version_is_shown_when_asked_for(cast, staff_client):
    memory = _big_history(cast.project_a)
    here = f"/manage/memories/{memory.pk}/?tab=files&path=big.md"
    page = staff_client.get(here).content.decode()
    assert page.count("x" * 20_000) == 1 and "v3 xxx" in page
    oldest = MemoryFileVersion.objects.get(memory=memory, version=1)
    link = f"?tab=files&amp;path=big.md&amp;version={oldest.pk}"
    assert f'href="/manage/memories/{memory.pk}/{link}" hx-get="/manage/memories/{memory.pk}/{link}"' in page
    version = staff_client.get(f"{here}&version={oldest.pk}", HTTP_HX_REQUEST="true").content.decode()
    assert version.count("x" * 20_000) == 1 and "v0 xxx" in version and "<html" not in version


def test_a_version_of_another_memory_is_not_shown(cast, staff_client):
    memory = _big_history(cast.project_a)
    other = _big_history(cast.project_b)
    theirs = MemoryFileVersion.objects.get(memory=other, version=1)
    page = staff_client.get(f"/manage/memories/{memory.pk}/?tab=files&path=big.md&version={theirs.pk}")
    assert page.status_code == 404
