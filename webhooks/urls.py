from django.urls import path

from webhooks import api

urlpatterns = [
    path("webhooks", api.WebhookListApi.as_view(), name="api-webhooks"),
    path("webhooks/<str:endpoint_id>", api.WebhookDetailApi.as_view(), name="api-webhook"),
    path("webhooks/<str:endpoint_id>/rotate", api.WebhookRotateApi.as_view(), name="api-webhook-rotate"),
    path("webhooks/<str:endpoint_id>/test", api.WebhookTestApi.as_view(), name="api-webhook-test"),
    path(
        "webhooks/<str:endpoint_id>/deliveries",
        api.WebhookDeliveryListApi.as_view(),
        name="api-webhook-deliveries",
    ),
    path(
        "webhooks/<str:endpoint_id>/deliveries/<str:delivery_id>/retry",
        api.WebhookDeliveryRetryApi.as_view(),
        name="api-webhook-delivery-retry",
    ),
]
