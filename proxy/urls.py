"""/v1 routes of the proxy: the provider protocols (OpenAI Chat Completions, Responses and
Conversations; Anthropic Messages) and the project's upstream settings."""

from django.urls import path

from proxy import api, openai_api, views

urlpatterns = [
    path("openai/chat/completions", views.openai_chat_completions, name="proxy-openai"),
    path("openai/responses", views.openai_responses, name="proxy-openai-responses"),
    path(
        "openai/responses/<str:response_id>", openai_api.ResponseApi.as_view(), name="proxy-openai-response"
    ),
    path(
        "openai/responses/<str:response_id>/input_items",
        openai_api.ResponseInputItemsApi.as_view(),
        name="proxy-openai-response-input-items",
    ),
    path(
        "openai/responses/<str:response_id>/cancel",
        openai_api.ResponseCancelApi.as_view(),
        name="proxy-openai-response-cancel",
    ),
    path("openai/conversations", openai_api.ConversationListApi.as_view(), name="proxy-conversations"),
    path(
        "openai/conversations/<str:conversation_id>",
        openai_api.ConversationDetailApi.as_view(),
        name="proxy-conversation",
    ),
    path(
        "openai/conversations/<str:conversation_id>/items",
        openai_api.ConversationItemListApi.as_view(),
        name="proxy-conversation-items",
    ),
    path(
        "openai/conversations/<str:conversation_id>/items/<str:item_id>",
        openai_api.ConversationItemApi.as_view(),
        name="proxy-conversation-item",
    ),
    path("anthropic/v1/messages", views.anthropic_messages, name="proxy-anthropic"),
    path("proxy/settings", api.ProxySettingsApi.as_view(), name="api-proxy-settings"),
    path("proxy/settings/<str:provider>", api.ProxyUpstreamApi.as_view(), name="api-proxy-upstream"),
]
