"""/v1 routes of the proxy: the two provider protocols and the project's upstream settings."""

from django.urls import path

from proxy import api, views

urlpatterns = [
    path("openai/chat/completions", views.openai_chat_completions, name="proxy-openai"),
    path("anthropic/v1/messages", views.anthropic_messages, name="proxy-anthropic"),
    path("proxy/settings", api.ProxySettingsApi.as_view(), name="api-proxy-settings"),
    path("proxy/settings/<str:provider>", api.ProxyUpstreamApi.as_view(), name="api-proxy-upstream"),
]
