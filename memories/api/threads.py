"""The /v1 routes of a memory's threads (SPEC 4.10) and of importing existing history into one,
by memory id or by external id.

Reading by an external id that no memory has yet creates none; the history import creates it,
as decorate does.
"""

from __future__ import annotations

from datetime import datetime

import orjson
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from common.errors import InvalidRequest, NotFound
from common.http.body import json_object, reject_unknown
from common.http.pagination import NOT_A_CURSOR, decode_cursor, encode_cursor, limit_param
from common.http.schema import errors
from common.messages import validate_messages
from memories import selectors, services
from memories.api import hot
from memories.api.schema import IDEMPOTENCY
from memories.models import Memory
from projects.auth import ProjectScopedMixin

ThreadOut = inline_serializer(
    "Thread",
    {
        "id": serializers.CharField(help_text="The thread's id (\"default\" for the memory's own)."),
        "created_at": serializers.DateTimeField(),
        "updated_at": serializers.DateTimeField(help_text="When its newest entry was said."),
        "turns": serializers.IntegerField(),
        "messages": serializers.IntegerField(help_text="Committed messages."),
        "tokens": serializers.IntegerField(help_text="Their estimated tokens."),
    },
)
ThreadDeleteOut = inline_serializer(
    "ThreadDeleteReceipt", {"deleted": serializers.DictField(child=serializers.IntegerField())}
)


def thread_json(thread) -> dict:
    return {
        "id": thread.name,
        "created_at": thread.created_at.isoformat(),
        "updated_at": thread.updated_at.isoformat(),
        "turns": thread.last_turn,
        "messages": thread.message_count,
        "tokens": thread.token_count,
    }


class _ThreadsRoute(ProjectScopedMixin, APIView):
    """A memory's threads, by memory id or (`external`) by external id. Reading by an external id
    that no memory has yet creates none."""

    external = False

    def _memory(self, ident: str, create: bool = False) -> Memory | None:
        if not self.external:
            return selectors.memory_get(project=self.project, memory_id=ident)
        if create:
            return hot.external_memory(self.project, ident)
        services.external_id_check(ident)
        return selectors.memory_list(project=self.project, external_id=ident).first()

    def _thread(self, memory: Memory | None, thread: str):
        services.external_id_check(thread, field="thread")
        if memory is None:
            raise NotFound(f"No thread '{thread}' in this memory.")
        return selectors.thread_get(memory=memory, name=thread)


class ThreadListApi(_ThreadsRoute):
    @extend_schema(
        operation_id="threads_list",
        parameters=[OpenApiParameter("limit", int), OpenApiParameter("cursor", str)],
        responses={
            200: inline_serializer(
                "ThreadList",
                {
                    "data": ThreadOut.__class__(many=True),
                    "next_cursor": serializers.CharField(allow_null=True),
                },
            ),
            **errors(400, 404),
        },
        description="The memory's threads, newest activity first.",
    )
    def get(self, request, memory_id: str = "", external_id: str = ""):
        memory = self._memory(external_id or memory_id)
        limit = limit_param(request, 20)
        cursor = decode_cursor(request.query_params.get("cursor"), 2)
        after = None
        if cursor:
            try:
                after = (datetime.fromisoformat(cursor[0]), cursor[1])
            except ValueError:
                raise InvalidRequest(NOT_A_CURSOR)
        if memory is None:
            return Response({"data": [], "next_cursor": None})
        rows, more = selectors.thread_list(memory=memory, limit=limit, after=after)
        next_cursor = encode_cursor(rows[-1].updated_at.isoformat(), rows[-1].name) if more else None
        return Response({"data": [thread_json(t) for t in rows], "next_cursor": next_cursor})


class ThreadDetailApi(_ThreadsRoute):
    @extend_schema(operation_id="threads_get", responses={200: ThreadOut, **errors(400, 404)})
    def get(self, request, thread: str, memory_id: str = "", external_id: str = ""):
        memory = self._memory(external_id or memory_id)
        return Response(thread_json(self._thread(memory, thread)))

    @extend_schema(
        operation_id="threads_delete",
        responses={200: ThreadDeleteOut, **errors(400, 404)},
        description="Remove the thread: its entries, turns, digests, index rows and summary, and the facts "
        "whose every source was in it (a fact with sources elsewhere keeps those).",
    )
    def delete(self, request, thread: str, memory_id: str = "", external_id: str = ""):
        memory = self._memory(external_id or memory_id)
        self._thread(memory, thread)
        return Response({"deleted": services.thread_delete(memory=memory, name=thread)})


@extend_schema_view(get=extend_schema(operation_id="threads_list_by_external_id"))
class ExternalThreadListApi(ThreadListApi):
    external = True


@extend_schema_view(
    get=extend_schema(operation_id="threads_get_by_external_id"),
    delete=extend_schema(operation_id="threads_delete_by_external_id"),
)
class ExternalThreadDetailApi(ThreadDetailApi):
    external = True


ImportMessageSchema = inline_serializer(
    "ImportedMessage",
    {
        "role": serializers.ChoiceField(["user", "assistant", "tool", "system"]),
        "content": serializers.JSONField(),
        "name": serializers.CharField(required=False),
        "tool_calls": serializers.ListField(child=serializers.DictField(), required=False),
        "tool_call_id": serializers.CharField(required=False),
        "created_at": serializers.DateTimeField(
            required=False, help_text="When it was said (ISO 8601 with its offset); default now."
        ),
    },
)
MessagesImportIn = inline_serializer(
    "MessagesImport",
    {
        "thread": serializers.CharField(required=False, help_text='Default "default".'),
        "messages": ImportMessageSchema.__class__(many=True, help_text="At most 2,000, oldest first."),
    },
)
MessagesImportOut = inline_serializer(
    "MessagesImported",
    {
        "accepted": serializers.IntegerField(),
        "thread": serializers.CharField(),
        "turns": serializers.ListField(child=serializers.IntegerField(), help_text="[first, last]"),
    },
)


class MessagesImportApi(_ThreadsRoute):
    @extend_schema(
        operation_id="messages_import",
        request=MessagesImportIn,
        parameters=[IDEMPOTENCY],
        responses={202: MessagesImportOut, **errors(400, 404, 413)},
        description="Append existing history to a thread with its own times, all or nothing; facts, recall "
        "and compaction follow in the background (`processing` reads pending until done).",
    )
    def post(self, request, memory_id: str = "", external_id: str = ""):
        key = services.check_idempotency_key(request.META.get("HTTP_IDEMPOTENCY_KEY"))
        data = json_object(request.data)
        reject_unknown(data, {"thread", "messages"})
        thread = hot.thread_input(data)
        memory = self._memory(external_id or memory_id, create=True)

        def run():
            answer = services.messages_import(
                memory=memory,
                thread=thread,
                raw_messages=data.get("messages"),
                validate=validate_messages,
            )
            return 202, orjson.dumps(answer), True

        status, body = services.idempotent_call(
            project=self.project, memory=memory, scope=f"messages:{memory.id}", key=key, run=run
        )
        return HttpResponse(body, status=status, content_type="application/json")


@extend_schema_view(post=extend_schema(operation_id="messages_import_by_external_id"))
class ExternalMessagesImportApi(MessagesImportApi):
    external = True
