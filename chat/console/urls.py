from django.urls import path

from . import views

app_name = "chat_console"

urlpatterns = [
    path("", views.agents, name="agents"),
]
