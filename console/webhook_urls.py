from django.urls import path

from console import webhook_views as views

app_name = "webhooks_console"
urlpatterns = [
    path("", views.endpoint_list, name="endpoints"),
    path("<str:endpoint_id>/", views.endpoint_detail, name="endpoint"),
    path("<str:endpoint_id>/rotate/", views.endpoint_rotate, name="rotate"),
    path("<str:endpoint_id>/test/", views.endpoint_test, name="test"),
    path("<str:endpoint_id>/delete/", views.endpoint_delete, name="delete"),
    path(
        "<str:endpoint_id>/deliveries/<str:delivery_id>/retry/", views.delivery_retry, name="delivery_retry"
    ),
]
