"""Memory files over /v1: the memory tool's six commands with the reference backend's texts
(`anthropic`'s BetaLocalFilesystemMemoryTool, run on a temp dir beside us), the refusals it lacks,
the caps, versions, scoping and the deletion receipt."""

from __future__ import annotations

import threading

import pytest
from anthropic.lib.tools import ToolError
from anthropic.tools.memory import BetaLocalFilesystemMemoryTool
from django.db import connection

from common.errors import NotFound
from memories import services
from memories.models import Memory, MemoryFile, MemoryFileVersion
from memories.services import files
from tests.fixtures.api import post

# One session of commands, in order: every command, its happy path and each of its refusals.
SESSION = [
    {"command": "view", "path": "/memories"},
    {"command": "create", "path": "/memories/notes.md", "file_text": "Likes coffee\nLives in Oslo\n"},
    {"command": "create", "path": "/memories/notes.md", "file_text": "again"},
    {
        "command": "create",
        "path": "/memories/projects/alpha/plan.md",
        "file_text": "step 1\nstep 2\nstep 1\n",
    },
    {"command": "create", "path": "/memories/projects/alpha/deep/x.md", "file_text": "hidden by depth"},
    {"command": "create", "path": "/memories/.hidden", "file_text": "not listed"},
    {"command": "create", "path": "/memories/empty.txt", "file_text": ""},
    {"command": "create", "path": "/memories/big.txt", "file_text": "x" * 3000},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/"},
    {"command": "view", "path": "/memories/projects"},
    {"command": "view", "path": "/memories/notes.md"},
    {"command": "view", "path": "/memories/notes.md", "view_range": [2, -1]},
    {"command": "view", "path": "/memories/notes.md", "view_range": [0, 1]},
    {"command": "view", "path": "/memories/notes.md", "view_range": [2, 2]},
    {"command": "view", "path": "/memories/empty.txt"},
    {"command": "view", "path": "/memories/missing.md"},
    {"command": "view", "path": "/etc/passwd"},
    {"command": "view", "path": "/memories/../etc/passwd"},
    {"command": "str_replace", "path": "/memories/notes.md", "old_str": "Oslo", "new_str": "Bergen"},
    {"command": "str_replace", "path": "/memories/notes.md", "old_str": "Paris", "new_str": "Rome"},
    {
        "command": "str_replace",
        "path": "/memories/projects/alpha/plan.md",
        "old_str": "step 1",
        "new_str": "s",
    },
    {"command": "str_replace", "path": "/memories/projects", "old_str": "a", "new_str": "b"},
    {"command": "str_replace", "path": "/memories/nope.md", "old_str": "a", "new_str": "b"},
    {"command": "insert", "path": "/memories/notes.md", "insert_line": 0, "insert_text": "# About\n"},
    {"command": "insert", "path": "/memories/notes.md", "insert_line": 3, "insert_text": "Has a dog"},
    {"command": "insert", "path": "/memories/notes.md", "insert_line": 9, "insert_text": "too far"},
    {"command": "insert", "path": "/memories/notes.md", "insert_line": -1, "insert_text": "negative"},
    {"command": "insert", "path": "/memories/empty.txt", "insert_line": 0, "insert_text": "first"},
    {"command": "insert", "path": "/memories/projects", "insert_line": 0, "insert_text": "x"},
    {"command": "view", "path": "/memories/notes.md"},
    {"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/people/me.md"},
    {"command": "rename", "old_path": "/memories/people/me.md", "new_path": "/memories/big.txt"},
    {"command": "rename", "old_path": "/memories/ghost.md", "new_path": "/memories/ghost2.md"},
    {"command": "rename", "old_path": "/memories", "new_path": "/memories/x"},
    {"command": "rename", "old_path": "/memories/projects", "new_path": "/memories/archive/projects"},
    {"command": "view", "path": "/memories"},
    {"command": "delete", "path": "/memories/big.txt"},
    {"command": "delete", "path": "/memories/big.txt"},
    {"command": "delete", "path": "/memories"},
    {"command": "delete", "path": "/memories/archive"},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/people/me.md"},
]


def reference_answer(tool: BetaLocalFilesystemMemoryTool, command: dict) -> tuple[str, bool]:
    try:
        return tool.call(command), False
    except ToolError as error:
        return str(error.content), True


def command(client, memory_id: str, body: dict):
    response = post(client, f"/v1/memories/{memory_id}/files/command", body)
    assert response.status_code == 200, response.content
    data = response.json()
    return data["result"], data["is_error"]


def test_every_command_answers_the_reference_backends_text(cast, memory_a, tmp_path):
    reference = BetaLocalFilesystemMemoryTool(base_path=str(tmp_path))
    for step in SESSION:
        assert command(cast.a, memory_a.id, step) == reference_answer(reference, step), step


def test_traversal_in_every_spelling_is_refused_and_nothing_is_written(cast, memory_a):
    for path in [
        "/memories/../secrets",
        "/memories/a/../../b",
        "/memories/%2e%2e/b",
        "/memories/%2E%2E%2Fb",
        "/memories/a/..",
        "/memories/..\\x",
    ]:
        result, is_error = command(cast.a, memory_a.id, {"command": "create", "path": path, "file_text": "x"})
        assert is_error and result == f"Path {path} would escape /memories directory"
    for path in ["/memories/a\x00b", "/memories/a\nb", "/memories/%00b", "/memories/\x1b[31m"]:
        result, is_error = command(cast.a, memory_a.id, {"command": "create", "path": path, "file_text": "x"})
        assert is_error and result == f"Path {path!r} contains control characters or invisible formatting"
    for path in ["/etc/passwd", "memories/x", "/memoriesx", ""]:
        result, is_error = command(cast.a, memory_a.id, {"command": "create", "path": path, "file_text": "x"})
        assert is_error and result == f"Path must start with /memories, got: {path}"
    assert not MemoryFile.objects.filter(memory=memory_a).exists()


def test_caps_refuse_with_a_text_naming_the_limit(cast, memory_a, settings):
    settings.THREADLESS_MEMORY_FILE_MAX_BYTES = 100
    settings.THREADLESS_MEMORY_FILES_MAX = 3
    settings.THREADLESS_MEMORY_FILES_MAX_TOTAL_BYTES = 150
    result, is_error = command(
        cast.a, memory_a.id, {"command": "create", "path": "/memories/a", "file_text": "x" * 101}
    )
    assert is_error and result.startswith(
        "File /memories/a would be 101 bytes; a memory file can hold at most 100 bytes"
    )
    assert (
        command(cast.a, memory_a.id, {"command": "create", "path": "/memories/a", "file_text": "x" * 90})[1]
        is False
    )
    result, is_error = command(
        cast.a, memory_a.id, {"command": "create", "path": "/memories/b", "file_text": "y" * 90}
    )
    assert is_error and "would take 180 bytes; the most they can take is 150 bytes" in result
    result, is_error = command(
        cast.a,
        memory_a.id,
        {"command": "str_replace", "path": "/memories/a", "old_str": "x" * 90, "new_str": "z" * 200},
    )
    assert is_error and "can hold at most 100 bytes" in result
    assert (
        command(cast.a, memory_a.id, {"command": "create", "path": "/memories/b", "file_text": "b"})[1]
        is False
    )
    assert (
        command(cast.a, memory_a.id, {"command": "create", "path": "/memories/c", "file_text": "c"})[1]
        is False
    )
    result, is_error = command(
        cast.a, memory_a.id, {"command": "create", "path": "/memories/d", "file_text": "d"}
    )
    assert is_error and result.startswith(
        "This memory already holds 3 files and directories, the most it can hold is 3"
    )
    assert sorted(MemoryFile.objects.filter(memory=memory_a).values_list("path", flat=True)) == [
        "a",
        "b",
        "c",
    ]


def test_a_change_keeps_the_previous_content_as_a_version(cast, memory_a):
    command(cast.a, memory_a.id, {"command": "create", "path": "/memories/n.md", "file_text": "one\n"})
    command(
        cast.a,
        memory_a.id,
        {"command": "str_replace", "path": "/memories/n.md", "old_str": "one", "new_str": "two"},
    )
    command(
        cast.a, memory_a.id, {"command": "rename", "old_path": "/memories/n.md", "new_path": "/memories/m.md"}
    )
    command(cast.a, memory_a.id, {"command": "delete", "path": "/memories/m.md"})
    kept = list(MemoryFileVersion.objects.filter(memory=memory_a).order_by("version"))
    assert [(v.path, v.version, v.content, v.command) for v in kept] == [
        ("m.md", 1, "one\n", "str_replace"),
        ("m.md", 2, "two\n", "delete"),
    ]
    assert kept[0].changed_by.startswith("tl_proj_") and kept[0].replaced_by == kept[0].changed_by


def test_the_listing_shows_paths_sizes_versions_and_who_changed_them(cast, memory_a):
    command(cast.a, memory_a.id, {"command": "create", "path": "/memories/dir/n.md", "file_text": "héllo"})
    command(
        cast.a,
        memory_a.id,
        {"command": "insert", "path": "/memories/dir/n.md", "insert_line": 1, "insert_text": "more"},
    )
    data = cast.a.get(f"/v1/memories/{memory_a.id}/files").json()["data"]
    assert [(f["path"], f["type"], f["size"], f["version"]) for f in data] == [
        ("/memories/dir", "directory", 0, 1),
        ("/memories/dir/n.md", "file", 12, 2),
    ]
    assert data[1]["changed_by"].startswith("tl_proj_")


def test_the_external_id_form_creates_the_memory_on_first_command(cast):
    result, is_error = command(
        cast.a, "external/user%2F7", {"command": "create", "path": "/memories/a.md", "file_text": "hi"}
    )
    assert (result, is_error) == ("File created successfully at: /memories/a.md", False)
    memory = Memory.objects.get(project=cast.project_a, external_id="user/7")
    assert cast.a.get("/v1/memories/external/user%2F7/files").json()["data"][0]["path"] == "/memories/a.md"
    assert cast.a.get("/v1/memories/external/nobody/files").json() == {"data": []}
    assert not Memory.objects.filter(external_id="nobody").exists()
    assert MemoryFile.objects.filter(memory=memory).count() == 1


def test_another_projects_memory_is_404_and_a_publishable_key_is_refused(cast, memory_a, memory_b):
    body = {"command": "create", "path": "/memories/x.md", "file_text": "x"}
    assert post(cast.b, f"/v1/memories/{memory_a.id}/files/command", body).status_code == 404
    assert cast.b.get(f"/v1/memories/{memory_a.id}/files").status_code == 404
    assert post(cast.anon, f"/v1/memories/{memory_a.id}/files/command", body).status_code == 401
    publishable = cast.api(cast.publishable_a)
    assert post(publishable, f"/v1/memories/{memory_a.id}/files/command", body).status_code == 401
    assert publishable.get(f"/v1/memories/{memory_a.id}/files").status_code == 401
    assert not MemoryFile.objects.exists()


def test_bad_bodies_answer_a_text_not_a_server_error(cast, memory_a):
    assert command(cast.a, memory_a.id, {"command": "format_disk"}) == (
        "Unknown command: format_disk. Use one of: view, create, str_replace, insert, delete, rename.",
        True,
    )
    assert command(cast.a, memory_a.id, {"command": "create", "path": "/memories/a"}) == (
        "Missing required parameter `file_text` for the create command.",
        True,
    )
    assert command(cast.a, memory_a.id, {"command": ["view"]})[1] is True
    assert command(
        cast.a, memory_a.id, {"command": "create", "path": "/memories/nul", "file_text": "a\x00b"}
    ) == (
        "Invalid `file_text` parameter: it contains a NUL character, which a memory file cannot hold.",
        True,
    )
    command(cast.a, memory_a.id, {"command": "create", "path": "/memories/a", "file_text": "a"})
    assert command(cast.a, memory_a.id, {"command": "view", "path": "/memories/a", "view_range": "1-2"}) == (
        "Invalid `view_range` parameter: '1-2'. It should be a list of two integers.",
        True,
    )
    assert command(
        cast.a,
        memory_a.id,
        {"command": "insert", "path": "/memories/a", "insert_line": "1", "insert_text": "b"},
    ) == ("Invalid `insert_line` parameter: '1'. It should be an integer.", True)
    assert post(cast.a, f"/v1/memories/{memory_a.id}/files/command", [1, 2]).status_code == 400
    unknown = post(cast.a, f"/v1/memories/{memory_a.id}/files/command", {"command": "view", "colour": "blue"})
    assert unknown.status_code == 400 and unknown.json()["error"]["message"].startswith("colour")


def test_deleting_the_memory_deletes_its_files_and_counts_them(cast, memory_a):
    command(cast.a, memory_a.id, {"command": "create", "path": "/memories/d/a.md", "file_text": "a"})
    command(
        cast.a,
        memory_a.id,
        {"command": "str_replace", "path": "/memories/d/a.md", "old_str": "a", "new_str": "b"},
    )
    receipt = services.memory_delete(memory=memory_a)
    assert (receipt["files"], receipt["file_versions"]) == (2, 1)
    assert not MemoryFile.objects.exists() and not MemoryFileVersion.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_to_one_file_lose_no_insert(cast):
    memory, _ = services.memory_create(project=cast.project_a)
    files.file_command(
        memory=memory,
        command={"command": "create", "path": "/memories/log.md", "file_text": ""},
        actor="test",
    )
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            for i in range(5):
                result = files.file_command(
                    memory=memory,
                    actor=f"writer-{n}",
                    command={
                        "command": "insert",
                        "path": "/memories/log.md",
                        "insert_line": 0,
                        "insert_text": f"{n}-{i}",
                    },
                )
                assert not result.is_error, result
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    node = MemoryFile.objects.get(memory=memory, path="log.md")
    assert sorted(node.content.split()) == sorted(f"{n}-{i}" for n in range(4) for i in range(5))
    assert node.version == 21
    assert MemoryFileVersion.objects.filter(memory=memory).count() == 20


def test_decorate_lists_the_files_in_the_context_block_only_when_asked(cast, memory_a):
    command(cast.a, memory_a.id, {"command": "create", "path": "/memories/prefs.md", "file_text": "Tea.\n"})
    plain = post(
        cast.a, f"/v1/memories/{memory_a.id}/decorate", {"messages": [{"role": "user", "content": "hi"}]}
    ).json()
    assert "/memories/prefs.md" not in plain["context_text"]
    asked = post(
        cast.a,
        f"/v1/memories/{memory_a.id}/decorate",
        {"messages": [{"role": "user", "content": "hi"}], "memory_files": True},
    ).json()
    assert asked["context_text"].startswith("Memory files (notes kept with the memory tool under /memories")
    assert "- /memories/prefs.md (5 bytes, updated " in asked["context_text"]
    assert "/memories/prefs.md" in asked["instructions"]
    bad = post(cast.a, f"/v1/memories/{memory_a.id}/decorate", {"messages": [], "memory_files": "yes"})
    assert bad.status_code == 400 and "memory_files" in bad.json()["error"]["message"]


def _edit(client, memory_id: str, n: int) -> None:
    result, is_error = command(
        client,
        memory_id,
        {"command": "insert", "path": "/memories/log.md", "insert_line": 0, "insert_text": f"edit {n}"},
    )
    assert not is_error, result


def test_kept_versions_share_the_memorys_byte_cap_and_the_oldest_go_first(cast, memory_a, settings):
    settings.THREADLESS_MEMORY_FILES_MAX_TOTAL_BYTES = 1000
    command(cast.a, memory_a.id, {"command": "create", "path": "/memories/log.md", "file_text": "x" * 200})
    for n in range(12):
        _edit(cast.a, memory_a.id, n)
    live = MemoryFile.objects.get(memory=memory_a, path="log.md")
    kept = list(MemoryFileVersion.objects.filter(memory=memory_a).order_by("-version"))
    assert live.size + sum(v.size for v in kept) <= 1000
    assert kept and kept[0].version == live.version - 1  # the newest are kept, without gaps
    assert [v.version for v in kept] == list(range(live.version - 1, live.version - 1 - len(kept), -1))


def test_at_most_the_newest_versions_of_a_memory_are_kept(cast, memory_a, settings):
    settings.THREADLESS_MEMORY_FILE_VERSIONS_MAX = 3
    command(cast.a, memory_a.id, {"command": "create", "path": "/memories/log.md", "file_text": ""})
    for n in range(6):
        _edit(cast.a, memory_a.id, n)
    command(cast.a, memory_a.id, {"command": "create", "path": "/memories/gone.md", "file_text": "bye"})
    command(cast.a, memory_a.id, {"command": "delete", "path": "/memories/gone.md"})
    kept = MemoryFileVersion.objects.filter(memory=memory_a).order_by("-id")
    assert [(v.path, v.version) for v in kept] == [("gone.md", 1), ("log.md", 6), ("log.md", 5)]


def test_a_write_that_fits_the_cap_prunes_history_rather_than_failing(cast, memory_a, settings):
    settings.THREADLESS_MEMORY_FILES_MAX_TOTAL_BYTES = 300
    command(cast.a, memory_a.id, {"command": "create", "path": "/memories/a.md", "file_text": "a" * 100})
    command(
        cast.a,
        memory_a.id,
        {"command": "str_replace", "path": "/memories/a.md", "old_str": "a" * 100, "new_str": "b" * 100},
    )
    assert MemoryFileVersion.objects.filter(memory=memory_a).count() == 1
    result, is_error = command(
        cast.a, memory_a.id, {"command": "create", "path": "/memories/c.md", "file_text": "c" * 200}
    )
    assert (result, is_error) == ("File created successfully at: /memories/c.md", False)
    assert not MemoryFileVersion.objects.filter(memory=memory_a).exists()


def test_renaming_a_directory_never_makes_a_path_longer_than_the_cap(cast, memory_a):
    long_name = "f" * (files.MAX_PATH_CHARS - len("d/"))
    command(cast.a, memory_a.id, {"command": "create", "path": f"/memories/d/{long_name}", "file_text": "x"})
    result, is_error = command(
        cast.a, memory_a.id, {"command": "rename", "old_path": "/memories/d", "new_path": "/memories/dd"}
    )
    assert is_error and f"at most {files.MAX_PATH_CHARS} characters" in result
    assert sorted(MemoryFile.objects.filter(memory=memory_a).values_list("path", flat=True)) == [
        "d",
        f"d/{long_name}",
    ]
    assert max(len(p) for p in MemoryFile.objects.values_list("path", flat=True)) <= files.MAX_PATH_CHARS


def test_renaming_to_a_path_over_the_cap_is_refused(cast, memory_a):
    command(cast.a, memory_a.id, {"command": "create", "path": "/memories/a.md", "file_text": "x"})
    too_long = "/memories/" + "n" * (files.MAX_PATH_CHARS + 1)
    result, is_error = command(
        cast.a, memory_a.id, {"command": "rename", "old_path": "/memories/a.md", "new_path": too_long}
    )
    assert is_error and f"at most {files.MAX_PATH_CHARS} characters" in result
    assert list(MemoryFile.objects.filter(memory=memory_a).values_list("path", flat=True)) == ["a.md"]


def test_a_non_unique_str_replace_names_the_first_ten_lines_and_counts_the_rest(cast, memory_a):
    command(cast.a, memory_a.id, {"command": "create", "path": "/memories/a.md", "file_text": "x\n" * 5000})
    result, is_error = command(
        cast.a,
        memory_a.id,
        {"command": "str_replace", "path": "/memories/a.md", "old_str": "\n", "new_str": ""},
    )
    assert is_error and result == (
        "No replacement was performed. Multiple occurrences of old_str `\n` in lines: "
        "1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 4990 more. Please ensure it is unique"
    )


def test_a_command_on_a_memory_deleted_meanwhile_is_a_not_found(cast, memory_a):
    services.memory_delete(memory=memory_a)
    with pytest.raises(NotFound):
        files.file_command(memory=memory_a, actor="test", command={"command": "view", "path": "/memories"})


@pytest.mark.parametrize(
    "path",
    [
        "/memories/evil\u202etxt.md",  # right-to-left override
        "/memories/a\u2028b.md",  # line separator
        "/memories/a\u2029b.md",  # paragraph separator
        "/memories/a\u200bb.md",  # zero-width space
        "/memories/a%E2%80%AEb.md",  # percent-encoded right-to-left override
    ],
)
def test_paths_with_invisible_or_line_breaking_characters_are_refused(cast, memory_a, path):
    result, is_error = command(cast.a, memory_a.id, {"command": "create", "path": path, "file_text": "x"})
    assert is_error and result.startswith(f"Path {path!r} contains")
    assert not MemoryFile.objects.filter(memory=memory_a).exists()
