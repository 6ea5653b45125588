"""/v1 routes of the chat app: agents (project keys) and conversations (project or publishable keys)."""

from django.urls import path

from chat.api import agents, conversations

urlpatterns = [
    path("agents", agents.AgentListApi.as_view(), name="api-agents"),
    path("agents/<str:agent_id>", agents.AgentDetailApi.as_view(), name="api-agent"),
    path("agents/<str:agent_id>/conversations", conversations.conversation_create, name="api-conversations"),
    path("conversations/<str:conversation_id>", conversations.conversation_detail, name="api-conversation"),
    path("conversations/<str:conversation_id>/say", conversations.conversation_say, name="api-say"),
    path("conversations/<str:conversation_id>/rerun", conversations.conversation_rerun, name="api-rerun"),
    path(
        "conversations/<str:conversation_id>/turns/<int:number>/events",
        conversations.turn_events,
        name="api-turn-events",
    ),
]
