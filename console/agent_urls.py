from django.urls import path

from console import agent_views as views

app_name = "chat_console"

urlpatterns = [
    path("", views.agents, name="agents"),
    path("new/", views.agent_new, name="agent_new"),
    path("secrets/", views.secrets_page, name="secrets"),
    path("<str:agent_id>/", views.agent_edit, name="agent"),
    path("<str:agent_id>/delete/", views.agent_delete, name="agent_delete"),
    path("<str:agent_id>/chat/", views.manager_chat, name="chat"),
    path("<str:agent_id>/chat/new/", views.manager_chat_new, name="chat_new"),
    path("<str:agent_id>/chat/<str:conversation_id>/say/", views.manager_say, name="chat_say"),
    path("<str:agent_id>/chat/<str:conversation_id>/rerun/", views.manager_rerun, name="chat_rerun"),
]
