from django.urls import path

from chat.widget import views

app_name = "widget"

urlpatterns = [
    path("<slug:slug>/", views.chat_page, name="chat"),
]
