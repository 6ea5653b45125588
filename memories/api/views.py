"""The /v1 memory API's resource routes: memories, their entries and facts, search, export and
import. One view per operation, thin, calling services and selectors.

Every view reaches memories through `selectors.memory_get(project=…)`, so another project's id
is a 404. The rest of the memory API, by concern: decorate and report in memories.api.hotroutes
(answered by memories.api.hot, which scopes the same way, or in the service's first statement on
the memory row), threads and the history import in memories.api.threads, the memory tool's files
in memories.api.memoryfiles.
"""

from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from common.errors import InvalidRequest
from common.http.body import json_object, reject_unknown
from common.http.pagination import decode_cursor, encode_cursor, limit_param, page_by_time
from common.http.schema import AwareDateTimeField, StrictCharField, StrictFloatField, errors
from memories import recall, selectors, services, transfer
from memories.models import Entry, Fact, Memory, Outbox
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
