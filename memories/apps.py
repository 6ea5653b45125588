from django.apps import AppConfig
from django.db.backends.signals import connection_created

from common import db


class MemoriesConfig(AppConfig):
    name = "memories"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        connection_created.connect(db.tune_sqlite)
