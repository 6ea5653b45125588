"""OpenAI's stored-object routes on the proxy: `/v1/openai/conversations…` and what a response id
leads to (`/v1/openai/responses/{id}…`), as DRF views.

Views only: they read the body, headers and query, call `proxy.conversations` and
`proxy.responses` and answer OpenAI's shapes. Errors become OpenAI's shape in
proxy.provider_errors; the routes stay out of Threadless's schema (OpenAI documents them).
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from common.errors import InvalidRequest
from common.http.body import json_object, reject_unknown
from projects.auth import ProjectScopedMixin
from proxy.conversations import (
    conversation_create,
    conversation_delete,
    conversation_get,
    conversation_item_delete,
    conversation_item_get,
    conversation_items,
    conversation_items_add,
    conversation_json,
    conversation_metadata_set,
    item_list,
)
from proxy.responses import response_lookup
from proxy.services import proxy_memory, thread_of

# --- conversations -----------------------------------------------------------------------------------


def _query_limit(request) -> int:
    raw = request.query_params.get("limit", "20")
    if not raw.isdigit() or not 1 <= int(raw) <= 100:
        raise InvalidRequest("limit: must be an integer from 1 to 100.")
    return int(raw)


def _query_order(request) -> str:
    order = request.query_params.get("order", "desc")
    if order not in ("asc", "desc"):
        raise InvalidRequest("order: must be 'asc' or 'desc'.")
    return order


@extend_schema(exclude=True)  # OpenAI's protocol, documented by OpenAI; not Threadless's error shape
class ConversationListApi(ProjectScopedMixin, APIView):
    def post(self, request):
        data = json_object(request.data)
        reject_unknown(data, {"items", "metadata"})
        thread = thread_of(request.headers.get("X-Threadless-Thread"))
        named = request.headers.get("X-Threadless-Memory", "").strip()
        memory = proxy_memory(
            project=self.project,
            memory_id=named if named.lower() != "none" else None,
            external_id=request.headers.get("X-Threadless-External-Id"),
            user=None,
        )
        conversation = conversation_create(
            project=self.project,
            items=data.get("items"),
            metadata=data.get("metadata"),
            memory=memory,
            thread=thread,
        )
        return Response(conversation_json(conversation))


@extend_schema(exclude=True)
class ConversationDetailApi(ProjectScopedMixin, APIView):
    def get(self, request, conversation_id: str):
        return Response(
            conversation_json(conversation_get(project=self.project, conversation_id=conversation_id))
        )

    def post(self, request, conversation_id: str):
        conversation = conversation_get(project=self.project, conversation_id=conversation_id)
        data = json_object(request.data)
        reject_unknown(data, {"metadata"})
        if "metadata" not in data:
            raise InvalidRequest("metadata: required.")
        updated = conversation_metadata_set(conversation=conversation, metadata=data["metadata"])
        return Response(conversation_json(updated))

    def delete(self, request, conversation_id: str):
        conversation = conversation_get(project=self.project, conversation_id=conversation_id)
        receipt = conversation_delete(conversation=conversation)
        return Response(
            {"id": conversation_id, "object": "conversation.deleted", "deleted": True, "receipt": receipt}
        )


@extend_schema(exclude=True)
class ConversationItemListApi(ProjectScopedMixin, APIView):
    def get(self, request, conversation_id: str):
        conversation = conversation_get(project=self.project, conversation_id=conversation_id)
        return Response(
            conversation_items(
                conversation=conversation,
                after=request.query_params.get("after") or None,
                order=_query_order(request),
                limit=_query_limit(request),
            )
        )

    def post(self, request, conversation_id: str):
        conversation = conversation_get(project=self.project, conversation_id=conversation_id)
        data = json_object(request.data)
        reject_unknown(data, {"items"})
        added = conversation_items_add(conversation=conversation, items=data.get("items"))
        return Response(item_list(added, False))


@extend_schema(exclude=True)
class ConversationItemApi(ProjectScopedMixin, APIView):
    def get(self, request, conversation_id: str, item_id: str):
        conversation = conversation_get(project=self.project, conversation_id=conversation_id)
        return Response(conversation_item_get(conversation=conversation, item_id=item_id))

    def delete(self, request, conversation_id: str, item_id: str):
        conversation = conversation_get(project=self.project, conversation_id=conversation_id)
        return Response(
            conversation_json(conversation_item_delete(conversation=conversation, item_id=item_id))
        )


# --- retrieve, delete, input items, cancel: what a response id leads to ----------------------------


@extend_schema(exclude=True)  # OpenAI's protocol; errors become OpenAI's shape in proxy.provider_errors
class ResponseApi(ProjectScopedMixin, APIView):
    """`client.responses.retrieve` / `.delete`: a 404 naming the memory that holds the turn."""

    def get(self, request, response_id: str):
        response_lookup(project=self.project, response_id=response_id)

    def delete(self, request, response_id: str):
        response_lookup(project=self.project, response_id=response_id)


@extend_schema(exclude=True)
class ResponseInputItemsApi(ProjectScopedMixin, APIView):
    """`client.responses.input_items.list`: the same answer as retrieve."""

    def get(self, request, response_id: str):
        response_lookup(project=self.project, response_id=response_id)


@extend_schema(exclude=True)
class ResponseCancelApi(ProjectScopedMixin, APIView):
    """`client.responses.cancel` (background responses): the same answer as retrieve."""

    def post(self, request, response_id: str):
        response_lookup(project=self.project, response_id=response_id)
