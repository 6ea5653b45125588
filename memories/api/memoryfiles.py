"""The /v1 routes of a memory's files (Anthropic's memory tool, memories.services.files), by memory
id or by external id: the listing, and one command as the model sent it.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_view, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from common.http.body import json_object, reject_unknown
from common.http.schema import errors
from memories import selectors
from memories.api import hot
from memories.models import Memory
from memories.services import files
from projects.auth import ProjectScopedMixin

MemoryFileOut = inline_serializer(
    "MemoryFile",
    {
        "path": serializers.CharField(help_text="Under /memories, as the model names it."),
        "type": serializers.ChoiceField(["file", "directory"]),
        "size": serializers.IntegerField(),
        "version": serializers.IntegerField(),
        "changed_by": serializers.CharField(),
        "created_at": serializers.DateTimeField(),
        "updated_at": serializers.DateTimeField(),
    },
)
FileCommandOut = inline_serializer(
    "MemoryFileCommandResult",
    {
        "result": serializers.CharField(help_text="The text the model is shown."),
        "is_error": serializers.BooleanField(
            help_text="True for a refused command (the tool result's is_error)."
        ),
    },
)


def memory_file_json(node) -> dict:
    return {
        "path": files.display_path(node.path),
        "type": "directory" if node.is_dir else "file",
        "size": node.size,
        "version": node.version,
        "changed_by": node.changed_by,
        "created_at": node.created_at.isoformat(),
        "updated_at": node.updated_at.isoformat(),
    }


class _FilesRoute(ProjectScopedMixin, APIView):
    external = False

    def _memory(self, ident: str, create: bool) -> Memory | None:
        """The memory (None: no memory has this external id yet, and reading creates none)."""
        if not self.external:
            return selectors.memory_get(project=self.project, memory_id=ident)
        if create:
            return hot.external_memory(self.project, ident)
        return selectors.memory_list(project=self.project, external_id=ident).first()


class MemoryFileListApi(_FilesRoute):
    @extend_schema(
        operation_id="memory_files_list",
        responses={
            200: inline_serializer("MemoryFileList", {"data": MemoryFileOut.__class__(many=True)}),
            **errors(404),
        },
        description="The memory's files and directories under /memories (no content; `view` reads one). By "
        "external id, a memory that does not exist yet has no files (nothing is created).",
    )
    def get(self, request, memory_id: str = "", external_id: str = ""):
        memory = self._memory(external_id or memory_id, create=False)
        nodes = selectors.file_list(memory=memory) if memory is not None else []
        return Response({"data": [memory_file_json(node) for node in nodes]})


class MemoryFileCommandApi(_FilesRoute):
    FileCommandIn = inline_serializer(
        "MemoryFileCommand",
        {
            "command": serializers.ChoiceField(list(files.COMMANDS)),
            "path": serializers.CharField(required=False),
            "view_range": serializers.ListField(child=serializers.IntegerField(), required=False),
            "file_text": serializers.CharField(required=False),
            "old_str": serializers.CharField(required=False),
            "new_str": serializers.CharField(required=False),
            "insert_line": serializers.IntegerField(required=False),
            "insert_text": serializers.CharField(required=False),
            "old_path": serializers.CharField(required=False),
            "new_path": serializers.CharField(required=False),
        },
    )

    @extend_schema(
        operation_id="memory_files_command",
        request=FileCommandIn,
        responses={200: FileCommandOut, **errors(400, 404, 413)},
        description="One command of Anthropic's memory tool, exactly as the model sent it. A refused "
        "command (a bad path, a non-unique str_replace, a cap) is 200 with is_error: true.",
    )
    def post(self, request, memory_id: str = "", external_id: str = ""):
        memory = self._memory(external_id or memory_id, create=True)
        command = json_object(request.data)
        reject_unknown(command, files.COMMAND_FIELDS)
        result = files.file_command(memory=memory, command=command, actor=request.auth.prefix)
        return Response(result.as_json())


@extend_schema_view(get=extend_schema(operation_id="memory_files_list_by_external_id"))
class ExternalMemoryFileListApi(MemoryFileListApi):
    external = True


@extend_schema_view(post=extend_schema(operation_id="memory_files_command_by_external_id"))
class ExternalMemoryFileCommandApi(MemoryFileCommandApi):
    external = True
