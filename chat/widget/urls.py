from django.urls import path

from . import views

app_name = "widget"

urlpatterns = [
    path("<slug:slug>/", views.chat_page, name="chat"),
]
