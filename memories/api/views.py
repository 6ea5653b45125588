"""The /v1 memory API: one view per operation, thin, calling services and selectors.

Every view reaches memories through `selectors.memory_get(project=…)`, so another project's id
is a 404. decorate and report (and their external-id twins) are answered by memories.api.hot,
which scopes the same way, or in the service's first statement on the memory row (`scoped=True`).
"""

from __future__ import annotations

from datetime import datetime

import orjson
from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from common.errors import InvalidRequest, NotFound
from common.http.body import json_object, reject_unknown
from common.http.pagination import NOT_A_CURSOR, decode_cursor, encode_cursor, limit_param, page_by_time
from common.http.schema import AwareDateTimeField, StrictCharField, StrictFloatField, errors
from common.messages import validate_messages
from memories import recall, selectors, services, transfer
from memories.api import hot
from memories.api.schema import IDEMPOTENCY
from memories.models import Entry, Fact, Memory, Outbox
from memories.services import files
from projects.auth import ProjectScopedMixin

PolicySchema = serializers.DictField(required=False, help_text='memoryPolicy: {"strictWriteDiscipline": {…}}')


# --- helpers -----------------------------------------------------------------------------------


def _metadata_filter(request) -> dict:
    """`?metadata.<key>=<value>` pairs; each key is checked to be literal (400 naming the parameter)."""
    return {
        selectors.metadata_filter_key(k[len("metadata.") :]): v
        for k, v in request.query_params.items()
        if k.startswith("metadata.")
    }


def memory_json(memory: Memory) -> dict:
    # A parked row (its job failed every attempt) is not waiting any more: the console shows it.
    pending = Outbox.objects.filter(memory_id=memory.id, processed_at=None, parked_at=None).exists()
    return {
        "id": memory.id,
        "external_id": memory.external_id,
        "created_at": memory.created_at.isoformat(),
        "updated_at": memory.updated_at.isoformat(),
        "metadata": memory.metadata,
        "instructions": memory.instructions,
        "policy": memory.policy
        or {"strictWriteDiscipline": {"enabled": False, "onFailure": "digest", "continueOnFailure": False}},
        "counts": {
            "messages": memory.message_count,
            "facts": Fact.objects.filter(memory_id=memory.id, active=True).count(),
            "digests": memory.digest_count,
            "tokens": memory.token_count,
        },
        "processing": "pending" if pending else "processed",
    }


def entry_json(entry: Entry) -> dict:
    content = entry.parts if entry.parts is not None else entry.content
    if entry.kind == "data":
        content = entry.value
    out = {
        "id": entry.id,
        "seq": entry.seq,
        "thread": entry.thread,
        "turn": entry.turn,
        "kind": entry.kind,
        "role": entry.role or None,
        "content": content,
        "task_id": entry.task_id or None,
        "committed": entry.committed,
        "tokens": entry.tokens,
        "created_at": entry.created_at.isoformat(),
    }
    if entry.tool_calls:
        out["tool_calls"] = entry.tool_calls
    if entry.tool_call_id:
        out["tool_call_id"] = entry.tool_call_id
    if entry.name:
        out["name"] = entry.name
    return out


def fact_json(fact: Fact) -> dict:
    return {
        "id": fact.id,
        "text": fact.text,
        "slot": fact.slot or None,
        "source_entry_ids": fact.source_entry_ids,
        "extractor": fact.extractor,
        "confidence": fact.confidence,
        "active": fact.active,
        "valid_from": fact.valid_from.isoformat() if fact.valid_from else None,
        "valid_to": fact.valid_to.isoformat() if fact.valid_to else None,
        "created_at": fact.created_at.isoformat(),
        "updated_at": fact.updated_at.isoformat(),
    }


MemoryOut = inline_serializer(
    "Memory",
    {
        "id": serializers.CharField(),
        "external_id": serializers.CharField(allow_null=True),
        "created_at": serializers.DateTimeField(),
        "updated_at": serializers.DateTimeField(),
        "metadata": serializers.DictField(),
        "instructions": serializers.CharField(),
        "policy": serializers.DictField(),
        "counts": serializers.DictField(child=serializers.IntegerField()),
        "processing": serializers.ChoiceField(["pending", "processed"]),
    },
)


# --- memories ----------------------------------------------------------------------------------


class MemoryListApi(ProjectScopedMixin, APIView):
    class MemoryCreateInput(serializers.Serializer):
        metadata = serializers.DictField(required=False)
        external_id = StrictCharField(required=False, max_length=200)
        instructions = StrictCharField(required=False, allow_blank=True, max_length=200_000)
        policy = PolicySchema

    @extend_schema(
        operation_id="memories_list",
        parameters=[
            OpenApiParameter("limit", int),
            OpenApiParameter("cursor", str),
            OpenApiParameter("external_id", str),
            OpenApiParameter(
                "metadata.<key>",
                str,
                description="Filter on a metadata value (repeatable). The key is literal: "
                "[A-Za-z0-9_.-], no '__'; anything else is 400.",
            ),
        ],
        responses={
            200: inline_serializer(
                "MemoryList",
                {
                    "data": MemoryOut.__class__(many=True),
                    "next_cursor": serializers.CharField(allow_null=True),
                },
            ),
            **errors(400),
        },
    )
    def get(self, request):
        qs = selectors.memory_list(
            project=self.project,
            external_id=request.query_params.get("external_id"),
            metadata=_metadata_filter(request),
        )
        return page_by_time(qs, request, "created_at", memory_json)

    @extend_schema(
        operation_id="memories_create",
        request=MemoryCreateInput,
        responses={201: MemoryOut, 200: MemoryOut, **errors(400)},
    )
    def post(self, request):
        data = json_object(request.data)
        reject_unknown(data, {"metadata", "external_id", "instructions", "policy"})
        serializer = self.MemoryCreateInput(data=data)
        serializer.is_valid(raise_exception=True)
        memory, created = services.memory_create(project=self.project, **serializer.validated_data)
        return Response(memory_json(memory), status=201 if created else 200)

    @extend_schema(
        operation_id="memories_delete_matching",
        parameters=[
            OpenApiParameter("external_id", str),
            OpenApiParameter(
                "metadata.<key>",
                str,
                description="Delete every memory with this metadata value (a literal key, as "
                "in the list filter).",
            ),
        ],
        responses={
            200: inline_serializer(
                "DeleteReceipt", {"deleted": serializers.DictField(child=serializers.IntegerField())}
            ),
            **errors(400),
        },
    )
    def delete(self, request):
        receipt = services.memory_delete_matching(
            project=self.project,
            metadata=_metadata_filter(request),
            external_id=request.query_params.get("external_id"),
        )
        return Response({"deleted": receipt})


class MemoryDetailApi(ProjectScopedMixin, APIView):
    class MemoryUpdateInput(serializers.Serializer):
        metadata = serializers.DictField(required=False)
        instructions = StrictCharField(required=False, allow_blank=True, max_length=200_000)
        policy = PolicySchema

    @extend_schema(operation_id="memories_get", responses={200: MemoryOut, **errors(404)})
    def get(self, request, memory_id: str):
        return Response(memory_json(selectors.memory_get(project=self.project, memory_id=memory_id)))

    @extend_schema(
        operation_id="memories_update",
        request=MemoryUpdateInput,
        responses={200: MemoryOut, **errors(400, 404)},
    )
    def patch(self, request, memory_id: str):
        memory = selectors.memory_get(project=self.project, memory_id=memory_id)
        data = json_object(request.data)
        reject_unknown(data, {"metadata", "instructions", "policy"})
        serializer = self.MemoryUpdateInput(data=data)
        serializer.is_valid(raise_exception=True)
        return Response(memory_json(services.memory_update(memory=memory, **serializer.validated_data)))

    @extend_schema(operation_id="memories_delete", responses={204: None, **errors(404)})
    def delete(self, request, memory_id: str):
        services.memory_delete(memory=selectors.memory_get(project=self.project, memory_id=memory_id))
        return Response(status=204)


# --- entries, facts, search --------------------------------------------------------------------


class EntryListApi(ProjectScopedMixin, APIView):
    @extend_schema(
        operation_id="memories_entries",
        parameters=[
            OpenApiParameter("include_uncommitted", bool),
            OpenApiParameter("thread", str, description="Only this thread's entries."),
            OpenApiParameter("limit", int),
            OpenApiParameter("cursor", str),
        ],
        responses={
            200: inline_serializer(
                "EntryList",
                {
                    "data": serializers.ListField(child=serializers.DictField()),
                    "next_cursor": serializers.CharField(allow_null=True),
                },
            ),
            **errors(400, 404),
        },
    )
    def get(self, request, memory_id: str):
        memory = selectors.memory_get(project=self.project, memory_id=memory_id)
        raw = request.query_params.get("include_uncommitted", "false").lower()
        if raw not in {"true", "false", "1", "0"}:
            raise InvalidRequest("include_uncommitted: must be true or false.")
        qs = selectors.entry_list(memory=memory, include_uncommitted=raw in {"true", "1"})
        thread = request.query_params.get("thread")
        if thread is not None:
            qs = qs.filter(thread=services.external_id_check(thread, field="thread"))
        limit = limit_param(request, 100, 1000)
        cursor = decode_cursor(request.query_params.get("cursor"), 1)
        if cursor:
            if not cursor[0].isdigit():
                raise InvalidRequest("cursor: not a cursor this API returned.")
            qs = qs.filter(seq__gt=int(cursor[0]))
        rows = list(qs[: limit + 1])
        more = len(rows) > limit
        rows = rows[:limit]
        return Response(
            {
                "data": [entry_json(e) for e in rows],
                "next_cursor": encode_cursor(rows[-1].seq) if more else None,
            }
        )


FactOut = inline_serializer(
    "Fact",
    {
        "id": serializers.CharField(),
        "text": serializers.CharField(),
        "slot": serializers.CharField(allow_null=True),
        "source_entry_ids": serializers.ListField(child=serializers.IntegerField()),
        "extractor": serializers.CharField(),
        "confidence": serializers.FloatField(),
        "active": serializers.BooleanField(),
        "valid_from": serializers.DateTimeField(
            allow_null=True,
            help_text="When the message it was learned from was said (null: a person wrote it).",
        ),
        "valid_to": serializers.DateTimeField(
            allow_null=True, help_text="When a later message superseded it (null while it holds)."
        ),
        "created_at": serializers.DateTimeField(),
        "updated_at": serializers.DateTimeField(),
    },
)


class FactListApi(ProjectScopedMixin, APIView):
    class FactCreateInput(serializers.Serializer):
        text = StrictCharField(max_length=2000)

    @extend_schema(
        operation_id="facts_list",
        parameters=[
            OpenApiParameter("limit", int),
            OpenApiParameter("cursor", str),
            OpenApiParameter("include_history", bool),
        ],
        responses={
            200: inline_serializer(
                "FactList",
                {"data": FactOut.__class__(many=True), "next_cursor": serializers.CharField(allow_null=True)},
            ),
            **errors(400, 404),
        },
    )
    def get(self, request, memory_id: str):
        memory = selectors.memory_get(project=self.project, memory_id=memory_id)
        include = request.query_params.get("include_history", "false").lower() in {"true", "1"}
        return page_by_time(
            selectors.fact_list(memory=memory, include_history=include),
            request,
            "updated_at",
            fact_json,
            default=100,
        )

    @extend_schema(
        operation_id="facts_create",
        request=FactCreateInput,
        responses={201: FactOut, 200: FactOut, **errors(400, 404)},
    )
    def post(self, request, memory_id: str):
        memory = selectors.memory_get(project=self.project, memory_id=memory_id)
        data = json_object(request.data)
        reject_unknown(data, {"text"})
        serializer = self.FactCreateInput(data=data)
        serializer.is_valid(raise_exception=True)
        fact, created = services.fact_create(memory=memory, text=serializer.validated_data["text"])
        return Response(fact_json(fact), status=201 if created else 200)


class FactDetailApi(ProjectScopedMixin, APIView):
    class FactUpdateInput(serializers.Serializer):
        text = StrictCharField(max_length=2000)

    @extend_schema(
        operation_id="facts_update", request=FactUpdateInput, responses={200: FactOut, **errors(400, 404)}
    )
    def patch(self, request, memory_id: str, fact_id: str):
        memory = selectors.memory_get(project=self.project, memory_id=memory_id)
        fact = selectors.fact_get(memory=memory, fact_id=fact_id)
        data = json_object(request.data)
        reject_unknown(data, {"text"})
        serializer = self.FactUpdateInput(data=data)
        serializer.is_valid(raise_exception=True)
        return Response(fact_json(services.fact_update(fact=fact, text=serializer.validated_data["text"])))

    @extend_schema(operation_id="facts_delete", responses={204: None, **errors(404)})
    def delete(self, request, memory_id: str, fact_id: str):
        memory = selectors.memory_get(project=self.project, memory_id=memory_id)
        services.fact_delete(fact=selectors.fact_get(memory=memory, fact_id=fact_id))
        return Response(status=204)


SEARCH_MAX = selectors.SEARCH_MAX


class SearchApi(ProjectScopedMixin, APIView):
    class SearchInput(serializers.Serializer):
        query = StrictCharField(max_length=2000)
        limit = serializers.IntegerField(required=False, min_value=1, max_value=SEARCH_MAX, default=10)
        thread = StrictCharField(required=False, max_length=200, help_text="Only this thread's messages.")
        role = serializers.ChoiceField(
            ["user", "assistant"], required=False, help_text="Only this speaker's messages."
        )
        after = AwareDateTimeField(
            required=False,
            help_text="Only what was said at or after this time (ISO 8601 with its offset); a fact's "
            "time is its source message's (`valid_from`), or when it was written.",
        )
        before = AwareDateTimeField(
            required=False,
            help_text="Only what was said strictly before this time (ISO 8601 with its offset).",
        )
        min_score = StrictFloatField(required=False, help_text="Only hits scoring at least this much.")
        include = serializers.ListField(
            child=serializers.ChoiceField(["messages", "facts"]),
            required=False,
            allow_empty=False,
            default=["messages"],
            help_text='What to search: "messages" (the default), "facts", or both, ranked in one list.',
        )

        def validate(self, attrs):
            after, before = attrs.get("after"), attrs.get("before")
            if after is not None and before is not None and before <= after:
                raise serializers.ValidationError({"before": "must be later than after."})
            return attrs

    SearchHit = inline_serializer(
        "SearchHit",
        {
            "type": serializers.ChoiceField(["message", "fact"]),
            "score": serializers.FloatField(
                help_text="Higher is better (BM25 over the matching candidates; a fact is scored as "
                "one more message, so both rank in one list)."
            ),
            "entry_id": serializers.IntegerField(required=False, help_text="message"),
            "seq": serializers.IntegerField(required=False, help_text="message"),
            "thread": serializers.CharField(required=False, help_text="message"),
            "turn": serializers.IntegerField(required=False, help_text="message: the turn in its thread."),
            "created_at": serializers.DateTimeField(
                required=False, help_text="When the message was said; when the fact was stored."
            ),
            "date": serializers.DateField(required=False, help_text="message: UTC date of the message."),
            "role": serializers.ChoiceField(["user", "assistant"], required=False, help_text="message"),
            "snippet": serializers.CharField(
                required=False, help_text="message: the message, or a window of it around the match."
            ),
            "id": serializers.CharField(required=False, help_text="fact"),
            "text": serializers.CharField(required=False, help_text="fact"),
            "slot": serializers.CharField(required=False, allow_null=True, help_text="fact"),
            "source_entry_ids": serializers.ListField(
                child=serializers.IntegerField(), required=False, help_text="fact"
            ),
            "valid_from": serializers.DateTimeField(required=False, allow_null=True, help_text="fact"),
            "valid_to": serializers.DateTimeField(required=False, allow_null=True, help_text="fact"),
            "updated_at": serializers.DateTimeField(required=False, help_text="fact"),
        },
    )

    @extend_schema(
        operation_id="memories_search",
        request=SearchInput,
        responses={
            200: inline_serializer("SearchResults", {"data": SearchHit.__class__(many=True)}),
            **errors(400, 404),
        },
        description="Search over the memory's committed user and assistant messages in every thread "
        "(or one, with `thread`), and with `include` its active facts, best first. Each hit says its "
        "`type`: a message hit carries its `seq`, `thread`, `turn`, `role`, `created_at` and `snippet`; a "
        "fact hit the fact's fields as `GET …/facts` answers them. `role` and `thread` narrow messages; "
        "`after` / `before` narrow both; `min_score` drops weaker hits. The filters are conditions of "
        "the index reads, so a narrowed search costs no more than a plain one.",
    )
    def post(self, request, memory_id: str):
        memory = selectors.memory_get(project=self.project, memory_id=memory_id)
        data = json_object(request.data)
        reject_unknown(data, SEARCH_FIELDS)
        serializer = self.SearchInput(data=data)
        serializer.is_valid(raise_exception=True)
        given = serializer.validated_data
        thread = given.get("thread")
        if thread is not None:
            services.external_id_check(thread, field="thread")
        hits = selectors.message_search(
            memory=memory,
            query=given["query"],
            limit=given["limit"],
            thread=thread,
            filters=recall.Filters(
                role=given.get("role"), after=given.get("after"), before=given.get("before")
            ),
            include=frozenset(given["include"]),
            min_score=given.get("min_score"),
        )
        return Response({"data": [_search_hit(hit) for hit in hits]})


SEARCH_FIELDS = {"query", "limit", "thread", "role", "after", "before", "min_score", "include"}


def _search_hit(hit: dict) -> dict:
    if hit.get("type") == "fact":
        return {"type": "fact", **fact_json(hit["fact"]), "score": hit["score"]}
    return {"type": "message", **hit}


# --- threads and the history import ------------------------------------------------------------

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


# --- memory files (Anthropic's memory tool) -----------------------------------------------------

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


# --- export and import -------------------------------------------------------------------------

NDJSON = "application/x-ndjson"


class MemoryExportApi(ProjectScopedMixin, APIView):
    @extend_schema(
        operation_id="memories_export",
        responses={(200, NDJSON): str, **errors(404)},
        description="The memory as a versioned JSON Lines document (memories.transfer), streamed.",
    )
    def get(self, request, memory_id: str):
        memory = selectors.memory_get(project=self.project, memory_id=memory_id)
        response = StreamingHttpResponse(transfer.memory_export(memory=memory), content_type=NDJSON)
        response["Content-Disposition"] = f'attachment; filename="{memory.id}.jsonl"'
        return response


class MemoryImportApi(ProjectScopedMixin, APIView):
    @extend_schema(
        operation_id="memories_import",
        request={NDJSON: str},
        responses={201: MemoryOut, 200: MemoryOut, **errors(400, 409, 413)},
        description="Bring an exported document into this key's project as a new memory, all or "
        "nothing; the same document again answers 200 with the memory it made.",
    )
    def post(self, request):
        content_type = request.META.get("CONTENT_TYPE", "").split(";", 1)[0].strip().lower()
        if content_type not in (NDJSON, "application/jsonl"):
            raise InvalidRequest(f"Content-Type: send the exported document as {NDJSON}.")
        memory, created = transfer.memory_import(
            project=self.project, lines=request.body.splitlines(keepends=True)
        )
        return Response(memory_json(memory), status=201 if created else 200)
