"""/v1 routes of the proxy: the provider protocols (OpenAI Chat Completions, Responses and
Conversations; Anthropic Messages) and the project's upstream settings."""

from django.urls import path

from proxy import api, conversations, responses, views

urlpatterns = [
    path("openai/chat/completions", views.openai_chat_completions, name="proxy-openai"),
    path("openai/responses", responses.openai_responses, name="proxy-openai-responses"),
    path("openai/responses/<str:response_id>", responses.ResponseApi.as_view(), name="proxy-openai-response"),
    path(
        "openai/responses/<str:response_id>/input_items",
        responses.ResponseInputItemsApi.as_view(),
        name="proxy-openai-response-input-items",
    ),
    path(
        "openai/responses/<str:response_id>/cancel",
        responses.ResponseCancelApi.as_view(),
        name="proxy-openai-response-cancel",
    ),
    path("openai/conversations", conversations.ConversationListApi.as_view(), name="proxy-conversations"),
    path(
        "openai/conversations/<str:conversation_id>",
        conversations.ConversationDetailApi.as_view(),
        name="proxy-conversation",
    ),
    path(
        "openai/conversations/<str:conversation_id>/items",
        conversations.ConversationItemListApi.as_view(),
        name="proxy-conversation-items",
    ),
    path(
        "openai/conversations/<str:conversation_id>/items/<str:item_id>",
        conversations.ConversationItemApi.as_view(),
        name="proxy-conversation-item",
    ),
    path("anthropic/v1/messages", views.anthropic_messages, name="proxy-anthropic"),
    path("proxy/settings", api.ProxySettingsApi.as_view(), name="api-proxy-settings"),
    path("proxy/settings/<str:provider>", api.ProxyUpstreamApi.as_view(), name="api-proxy-upstream"),
]
