import logging

from django.apps import AppConfig

from common.sigterm import install_if_uvicorn


class ChatConfig(AppConfig):
    name = "chat"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Under uvicorn the app is loaded after its signal handlers are set: chain ours in front.

        install_if_uvicorn()
        # httpx logs every provider/API request at INFO: too chatty for a server log.
        logging.getLogger("httpx").setLevel(logging.WARNING)
