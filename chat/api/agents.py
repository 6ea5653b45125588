"""/v1/agents: project-key CRUD, one view per operation family (DRF, thin)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from chat import selectors, services
from chat.models import Agent
from common.http.body import json_object, reject_unknown
from common.http.pagination import page_by_time
from common.http.schema import errors
from projects.auth import ProjectScopedMixin


def agent_json(agent: Agent) -> dict:
    return {
        "id": agent.id,
        "slug": agent.slug,
        "name": agent.name,
        "config": agent.config,
        "created_at": agent.created_at.isoformat(),
        "updated_at": agent.updated_at.isoformat(),
    }


class AgentOut(serializers.Serializer):
    id = serializers.CharField()
    slug = serializers.CharField()
    name = serializers.CharField()
    config = serializers.DictField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


AgentSchema = AgentOut
AgentList = inline_serializer(
    "AgentList", {"data": AgentOut(many=True), "next_cursor": serializers.CharField(allow_null=True)}
)
AgentInput = inline_serializer(
    "AgentInput",
    {
        "name": serializers.CharField(),
        "config": serializers.DictField(help_text="SPEC 6.1 agent config"),
        "slug": serializers.CharField(required=False),
    },
)


class AgentListApi(ProjectScopedMixin, APIView):
    @extend_schema(
        operation_id="agents_list",
        parameters=[OpenApiParameter("limit", int), OpenApiParameter("cursor", str)],
        responses={200: AgentList, **errors(400)},
    )
    def get(self, request):
        return page_by_time(selectors.agent_list(project=self.project), request, "created_at", agent_json)

    @extend_schema(
        operation_id="agents_create", request=AgentInput, responses={201: AgentSchema, **errors(400)}
    )
    def post(self, request):
        data = json_object(request.data)
        reject_unknown(data, {"name", "config", "slug"})
        agent = services.agent_create(
            project=self.project, name=data.get("name"), config=data.get("config"), slug=data.get("slug")
        )
        return Response(agent_json(agent), status=201)


class AgentDetailApi(ProjectScopedMixin, APIView):
    @extend_schema(operation_id="agents_get", responses={200: AgentSchema, **errors(404)})
    def get(self, request, agent_id: str):
        return Response(agent_json(selectors.agent_get(project=self.project, agent_id=agent_id)))

    @extend_schema(
        operation_id="agents_update", request=AgentInput, responses={200: AgentSchema, **errors(400, 404)}
    )
    def put(self, request, agent_id: str):
        agent = selectors.agent_get(project=self.project, agent_id=agent_id)
        data = json_object(request.data)
        reject_unknown(data, {"name", "config", "slug"})
        agent = services.agent_update(
            agent=agent, name=data.get("name"), config=data.get("config"), slug=data.get("slug")
        )
        return Response(agent_json(agent))

    @extend_schema(operation_id="agents_delete", responses={204: None, **errors(404)})
    def delete(self, request, agent_id: str):
        services.agent_delete(agent=selectors.agent_get(project=self.project, agent_id=agent_id))
        return Response(status=204)
