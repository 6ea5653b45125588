"""Memory files: the six commands of Anthropic's memory tool (`memory_20250818`) on a memory's
virtual `/memories` folder, stored as rows (memories.models.MemoryFile).

The semantics and every result and error text follow the `anthropic` package's reference backend,
`BetaLocalFilesystemMemoryTool`, because those are the texts the model is trained on; tests
compare the two command by command. Where the reference would crash or leave the folder (a `..`,
a percent-encoded one, a control character) or has no limit (sizes, counts), the command is
refused with a short text instead. A command is answered as `FileResult(text, is_error)`: a
refusal is a result for the model, never an HTTP error.

Each command runs in one transaction under the memory's row lock (`memory_lock`), so concurrent
writers apply one after the other and none is lost; a change keeps the content it replaced as a
MemoryFileVersion row. The kept versions share the memory's byte cap with its files and have a
count cap of their own: after every change the oldest go until both hold, so what a memory stores
stays bounded however often it is edited. Nothing here calls a model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memories.models import Memory, MemoryFile, MemoryFileVersion
from memories.services.entries import memory_lock
from memories.services.memories import printable

ROOT = "/memories"
MAX_LINES = 999999
LINE_NUMBER_WIDTH = len(str(MAX_LINES))
MAX_PATH_CHARS = 512
# A directory's size as the reference shows it on an ext4 disk (its block), so listings read the same.
DIR_SIZE = 4096
# A non-unique str_replace names this many lines: the answer and its work stay small however many match.
MATCHING_LINES_SHOWN = 10
COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
COMMAND_FIELDS = frozenset(
    {
        "command",
        "path",
        "view_range",
        "file_text",
        "old_str",
        "new_str",
        "insert_line",
        "insert_text",
        "old_path",
        "new_path",
    }
)


@dataclass(frozen=True)
class FileResult:
    result: str
    is_error: bool = False

    def as_json(self) -> dict:
        return {"result": self.result, "is_error": self.is_error}


class Refused(Exception):
    """A command the model gets back as an error text (the reference's `ToolError`)."""


@dataclass(frozen=True)
class FileLimits:
    file_bytes: int
    files: int
    total_bytes: int  # the files' bytes, and with them those of the kept versions
    versions: int  # kept versions per memory

    @classmethod
    def from_settings(cls) -> FileLimits:
        return cls(
            file_bytes=settings.THREADLESS_MEMORY_FILE_MAX_BYTES,
            files=settings.THREADLESS_MEMORY_FILES_MAX,
            total_bytes=settings.THREADLESS_MEMORY_FILES_MAX_TOTAL_BYTES,
            versions=settings.THREADLESS_MEMORY_FILE_VERSIONS_MAX,
        )


# --- paths --------------------------------------------------------------------------------------


def file_path(path: Any) -> str:
    """The path relative to `/memories` ("" for the folder itself), or Refused."""
    if not isinstance(path, str):
        raise Refused("Path must be a string starting with /memories")
    # The rule of external ids: no control, format or separator character (NUL crashes the
    # reference; a bidi override or line separator would disguise the name in listings).
    if not printable(path):
        raise Refused(f"Path {path!r} contains control characters or invisible formatting")
    rest = path[len(ROOT) :]
    if not path.startswith(ROOT) or (rest and not rest.startswith("/")):
        raise Refused(f"Path must start with /memories, got: {path}")
    decoded = unquote(rest)
    if not printable(decoded):
        raise Refused(f"Path {path!r} contains control characters or invisible formatting")
    for form in (rest, decoded):
        if ".." in form.replace("\\", "/").split("/"):
            raise Refused(f"Path {path} would escape /memories directory")
    relative = "/".join(part for part in rest.split("/") if part not in ("", "."))
    if len(relative) > MAX_PATH_CHARS:
        raise Refused(f"Path {path[:80]}… is too long (at most {MAX_PATH_CHARS} characters)")
    return relative


def display_path(relative: str) -> str:
    return f"{ROOT}/{relative}" if relative else ROOT


def _parent(relative: str) -> str:
    return relative.rpartition("/")[0]


def _ancestors(relative: str) -> list[str]:
    """Every folder above `relative`, outermost first, the root excluded."""
    parts = relative.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _format_file_size(size: int) -> str:
    if size == 0:
        return "0B"
    i = min((size.bit_length() - 1) // 10, 3)
    scaled = size / (1024**i)
    unit = "BKMG"[i]
    return f"{int(scaled)}{unit}" if scaled == int(scaled) else f"{scaled:.1f}{unit}"


def _numbered(lines: list[str], start: int) -> str:
    return "\n".join(f"{str(i + start).rjust(LINE_NUMBER_WIDTH)}\t{line}" for i, line in enumerate(lines))


def _lines_keeping_cr(content: str) -> list[str]:
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


# --- the folder of one memory, read once per command under the lock -------------------------------


class _Folder:
    def __init__(self, memory: Memory, actor: str, limits: FileLimits) -> None:
        self.memory, self.actor, self.limits = memory, actor, limits
        self.nodes = {f.path: f for f in MemoryFile.objects.filter(memory=memory).defer("content")}

    def exists(self, relative: str) -> bool:
        return relative == "" or relative in self.nodes

    def is_dir(self, relative: str) -> bool:
        return relative == "" or (relative in self.nodes and self.nodes[relative].is_dir)

    def children(self, relative: str) -> list[MemoryFile]:
        prefix = f"{relative}/" if relative else ""
        return sorted(
            (f for p, f in self.nodes.items() if p.startswith(prefix) and "/" not in p[len(prefix) :]),
            key=lambda f: f.path.rpartition("/")[2],
        )

    def below(self, relative: str) -> list[MemoryFile]:
        return [f for p, f in self.nodes.items() if p.startswith(f"{relative}/")]

    def content(self, relative: str) -> str:
        return MemoryFile.objects.filter(pk=self.nodes[relative].pk).values_list("content", flat=True).get()

    def total_bytes(self) -> int:
        return sum(f.size for f in self.nodes.values())

    # caps
    def check_room(
        self, *, new_nodes: int = 0, new_bytes: int = 0, file_bytes: int | None = None, path: str = ""
    ) -> None:
        limits = self.limits
        if file_bytes is not None and file_bytes > limits.file_bytes:
            raise Refused(
                f"File {path} would be {file_bytes:,} bytes; a memory file can hold at most "
                f"{limits.file_bytes:,} bytes. Keep it shorter or split it into several files."
            )
        if new_nodes and len(self.nodes) + new_nodes > limits.files:
            raise Refused(
                f"This memory already holds {len(self.nodes):,} files and directories, the most it can "
                f"hold is {limits.files:,}. Delete or merge files first."
            )
        if new_bytes > 0 and self.total_bytes() + new_bytes > limits.total_bytes:
            raise Refused(
                f"The files of this memory would take {self.total_bytes() + new_bytes:,} bytes; the most "
                f"they can take is {limits.total_bytes:,} bytes. Delete or shorten files first."
            )

    # writes
    def make_dirs(self, relative: str) -> None:
        """Create the missing folders of `relative` itself and above it (like `mkdir -p`)."""
        chain = [*_ancestors(relative), relative] if relative else []
        for folder in chain:
            if folder in self.nodes and not self.nodes[folder].is_dir:
                raise Refused(f"{display_path(folder)} is a file, not a directory")
        missing = [folder for folder in chain if folder not in self.nodes]
        self.check_room(new_nodes=len(missing))
        for folder in missing:
            self.nodes[folder] = MemoryFile.objects.create(
                memory=self.memory, path=folder, is_dir=True, changed_by=self.actor
            )

    def keep_version(self, node: MemoryFile, command: str) -> None:
        MemoryFileVersion.objects.create(
            memory=self.memory,
            path=node.path,
            version=node.version,
            content=self.content(node.path),
            size=node.size,
            changed_by=node.changed_by,
            changed_at=node.updated_at,
            command=command,
            replaced_by=self.actor,
        )

    def write(self, relative: str, content: str, command: str) -> None:
        node = self.nodes[relative]
        self.keep_version(node, command)
        node.content, node.size, node.version, node.changed_by = (
            content,
            _size(content),
            node.version + 1,
            self.actor,
        )
        node.save(update_fields=["content", "size", "version", "changed_by", "updated_at"])

    def prune_versions(self) -> None:
        """Keep the newest versions that fit beside the files (`versions_kept`)."""
        newest_first = MemoryFileVersion.objects.filter(memory=self.memory).order_by("-replaced_at", "-id")
        rows = list(newest_first.values_list("pk", "size"))
        kept = versions_kept(
            [size for _pk, size in rows],
            room=self.limits.total_bytes - self.total_bytes(),
            limits=self.limits,
        )
        if kept < len(rows):
            MemoryFileVersion.objects.filter(memory=self.memory).exclude(
                pk__in=[pk for pk, _size in rows[:kept]]
            ).delete()


def versions_kept(sizes_newest_first: list[int], *, room: int, limits: FileLimits) -> int:
    """How many of a memory's versions, newest first, stay: at most `limits.versions`, and within
    the `room` the files leave of `limits.total_bytes`. The oldest go first; a write the files have
    room for never fails for the history's sake."""
    kept = 0
    for size in sizes_newest_first:
        if kept == limits.versions or size > room:
            break
        kept += 1
        room -= size
    return kept


# --- the six commands ---------------------------------------------------------------------------


_TEXT_FIELDS = frozenset({"file_text", "old_str", "new_str", "insert_text"})


def _param(command: dict, name: str, kind: type) -> Any:
    value = command.get(name)
    if value is None:
        raise Refused(f"Missing required parameter `{name}` for the {command.get('command')} command.")
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise Refused(
            f"Invalid `{name}` parameter: {repr(value)[:100]}. "
            f"It should be {'an integer' if kind is int else 'a string'}."
        )
    if kind is str and "\x00" in value and name in _TEXT_FIELDS:
        raise Refused(
            f"Invalid `{name}` parameter: it contains a NUL character, which a memory file cannot hold."
        )
    return value


def _view(folder: _Folder, command: dict) -> str:
    path = _param(command, "path", str)
    relative = file_path(path)
    if not folder.exists(relative):
        raise Refused(f"The path {path} does not exist. Please provide a valid path.")
    if folder.is_dir(relative):
        rows: list[tuple[str, str]] = []

        def collect(directory: str, shown: str, depth: int) -> None:
            for node in folder.children(directory):
                name = node.path.rpartition("/")[2]
                if name.startswith("."):
                    continue
                item = f"{shown}/{name}" if shown else name
                if node.is_dir:
                    rows.append((_format_file_size(DIR_SIZE), f"{item}/"))
                    if depth < 2:
                        collect(node.path, item, depth + 1)
                else:
                    rows.append((_format_file_size(node.size), item))

        collect(relative, "", 1)
        header = f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"
        lines = [f"{_format_file_size(DIR_SIZE)}\t{path}", *(f"{size}\t{path}/{item}" for size, item in rows)]
        return f"{header}\n" + "\n".join(lines)
    lines = folder.content(relative).split("\n")
    if len(lines) > MAX_LINES:
        raise Refused(f"File {path} exceeds maximum line limit of 999,999 lines.")
    shown, start = lines, 1
    view_range = command.get("view_range")
    if view_range is not None and (
        not isinstance(view_range, list)
        or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)
    ):
        raise Refused(f"Invalid `view_range` parameter: {view_range!r}. It should be a list of two integers.")
    if view_range and len(view_range) == 2:
        first = max(1, view_range[0]) - 1
        last = len(lines) if view_range[1] == -1 else view_range[1]
        shown, start = lines[first:last], first + 1
    return f"Here's the content of {path} with line numbers:\n" + _numbered(shown, start)


def _create(folder: _Folder, command: dict) -> str:
    path = _param(command, "path", str)
    relative = file_path(path)
    text = _param(command, "file_text", str)
    if folder.exists(relative):
        raise Refused(f"File {path} already exists")
    size = _size(text)
    folder.check_room(file_bytes=size, new_bytes=size, path=path)
    folder.make_dirs(_parent(relative))
    folder.check_room(new_nodes=1)
    folder.nodes[relative] = MemoryFile.objects.create(
        memory=folder.memory, path=relative, content=text, size=size, changed_by=folder.actor
    )
    return f"File created successfully at: {path}"


def _existing_file(folder: _Folder, path: str) -> str:
    relative = file_path(path)
    if not folder.exists(relative):
        raise Refused(f"The path {path} does not exist. Please provide a valid path.")
    if folder.is_dir(relative):
        raise Refused(f"The path {path} is not a file.")
    return relative


def _check_size(folder: _Folder, relative: str, new_content: str, path: str) -> None:
    size = _size(new_content)
    folder.check_room(file_bytes=size, new_bytes=size - folder.nodes[relative].size, path=path)


def _matching_lines(content: str, old: str, count: int) -> str:
    """The lines of the first MATCHING_LINES_SHOWN of the `count` occurrences of `old` and how many
    more there are, reading the text only up to the last one named.

    The occurrences are those `str.count` and `str.replace` see; the reference also lists
    overlapping ones (`aa` in `aaaa`: lines 1, 1, 1 where this says 1, 1) and lists them all."""
    lines, line, counted_to = [], 1, 0
    pos = content.find(old)
    while pos != -1 and len(lines) < MATCHING_LINES_SHOWN:
        line += content.count("\n", counted_to, pos)
        counted_to = pos
        lines.append(str(line))
        pos = content.find(old, pos + max(len(old), 1))
    named = ", ".join(lines)
    return named if count <= len(lines) else f"{named} and {count - len(lines)} more"


def _str_replace(folder: _Folder, command: dict) -> str:
    path = _param(command, "path", str)
    relative = _existing_file(folder, path)
    old, new = _param(command, "old_str", str), _param(command, "new_str", str)
    content = folder.content(relative)
    count = content.count(old)
    if count == 0:
        raise Refused(f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}.")
    if count > 1:
        found = _matching_lines(content, old, count)
        raise Refused(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: {found}. "
            "Please ensure it is unique"
        )
    changed_line_index = content[: content.find(old)].count("\n")
    new_content = content.replace(old, new)
    _check_size(folder, relative, new_content, path)
    folder.write(relative, new_content, "str_replace")
    new_lines = new_content.split("\n")
    first, last = max(0, changed_line_index - 2), min(len(new_lines), changed_line_index + 3)
    return (
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
        + _numbered(new_lines[first:last], first + 1)
    )


def _insert(folder: _Folder, command: dict) -> str:
    path = _param(command, "path", str)
    relative = _existing_file(folder, path)
    line, text = _param(command, "insert_line", int), _param(command, "insert_text", str)
    lines = _lines_keeping_cr(folder.content(relative))
    if line < 0 or line > len(lines):
        raise Refused(
            f"Invalid `insert_line` parameter: {line}. It should be within the range [0, {len(lines)}]."
        )
    lines.insert(line, text.rstrip("\n"))
    new_content = "\n".join(lines)
    if not new_content.endswith("\n"):
        new_content += "\n"
    _check_size(folder, relative, new_content, path)
    folder.write(relative, new_content, "insert")
    return f"The file {path} has been edited."


def _delete(folder: _Folder, command: dict) -> str:
    path = _param(command, "path", str)
    relative = file_path(path)
    if relative == "":
        raise Refused("Cannot delete the /memories directory itself")
    if not folder.exists(relative):
        raise Refused(f"The path {path} does not exist")
    gone = [folder.nodes[relative], *folder.below(relative)]
    for node in gone:
        if not node.is_dir:
            folder.keep_version(node, "delete")
        del folder.nodes[node.path]
    MemoryFile.objects.filter(pk__in=[node.pk for node in gone]).delete()
    return f"Successfully deleted {path}"


def _rename(folder: _Folder, command: dict) -> str:
    old_path, new_path = _param(command, "old_path", str), _param(command, "new_path", str)
    old, new = file_path(old_path), file_path(new_path)
    if old == "":
        raise Refused("Cannot rename the /memories directory itself")
    if folder.exists(new):
        raise Refused(f"The destination {new_path} already exists")
    if new.startswith(f"{old}/"):
        raise Refused(f"Cannot move {old_path} into itself ({new_path})")
    folder.make_dirs(_parent(new))
    if not folder.exists(old):
        raise Refused(f"The path {old_path} does not exist")
    moved = [folder.nodes[old], *folder.below(old)]
    longest = max((new + node.path[len(old) :] for node in moved), key=len)
    if len(longest) > MAX_PATH_CHARS:
        raise Refused(
            f"Cannot rename {old_path} to {new_path}: the path {display_path(longest)[:80]}… inside it "
            f"would be too long (at most {MAX_PATH_CHARS} characters)"
        )
    for node in moved:
        target = new + node.path[len(old) :]
        MemoryFileVersion.objects.filter(memory=folder.memory, path=node.path).update(path=target)
        node.path, node.changed_by = target, folder.actor
        node.save(update_fields=["path", "changed_by", "updated_at"])
    return f"Successfully renamed {old_path} to {new_path}"


_HANDLERS = {
    "view": _view,
    "create": _create,
    "str_replace": _str_replace,
    "insert": _insert,
    "delete": _delete,
    "rename": _rename,
}


def file_command(
    *, memory: Memory, command: dict, actor: str, limits: FileLimits | None = None
) -> FileResult:
    """Run one memory-tool command (the object exactly as the model sent it) on `memory`'s files.

    `actor` names who changed a file (a key prefix, `console:<user>`), shown in the console."""
    if not isinstance(command, dict):
        return FileResult("The command must be an object with a `command` field.", True)
    name = command.get("command")
    handler = _HANDLERS.get(name) if isinstance(name, str) else None
    if handler is None:
        return FileResult(f"Unknown command: {str(name)[:100]}. Use one of: {', '.join(COMMANDS)}.", True)
    limits = limits or FileLimits.from_settings()
    try:
        with transaction.atomic():
            locked = memory_lock(memory)
            folder = _Folder(locked, actor[:120], limits)
            text = handler(folder, command)
            if command["command"] != "view":
                folder.prune_versions()
                Memory.objects.filter(pk=locked.pk).update(updated_at=timezone.now())
    except Refused as refusal:
        return FileResult(str(refusal), True)
    return FileResult(text)
