"""Test-only URLs: the real site plus views that fail on purpose, under /v1."""

from django.core.exceptions import ValidationError
from django.db import IntegrityError, OperationalError
from django.urls import path
from rest_framework.views import APIView

from threadless_site.urls import urlpatterns as site_urlpatterns

SECRET = "sk-live-boom0123456789abcdef"


class Boom(APIView):
    def get(self, request, kind: str):
        if kind == "runtime":
            raise RuntimeError(f"kaboom with {SECRET}")
        if kind == "validation":
            raise ValidationError({"when": ["Enter a valid date."]})
        if kind == "database":
            raise IntegrityError(
                'duplicate key value violates unique constraint "x" SELECT * FROM memories_memory'
            )
        if kind == "redis-down":
            from redis.exceptions import ConnectionError as RedisConnectionError

            raise RedisConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        if kind == "database-down":
            raise OperationalError("connection to server at 127.0.0.1 failed")
        return None


def plain_boom(request):
    raise RuntimeError(f"plain view failed with {SECRET}")


urlpatterns = [
    path("v1/test/boom/<str:kind>", Boom.as_view()),
    path("v1/test/plain-boom", plain_boom),
    *site_urlpatterns,
]
