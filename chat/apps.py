import logging

from django.apps import AppConfig

from common.sigterm import install_if_uvicorn
from memories.signals import thread_deleted


class ChatConfig(AppConfig):
    name = "chat"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Under uvicorn the app is loaded after its signal handlers are set: chain ours in front.

        install_if_uvicorn()
        # A conversation that is a memory's thread goes when that thread is deleted (the services
        # import the models, so not before the app registry is ready).
        from chat.services import conversation_thread_deleted

        thread_deleted.connect(conversation_thread_deleted, dispatch_uid="chat.conversation_thread_deleted")
        # httpx logs every provider/API request at INFO: too chatty for a server log.
        logging.getLogger("httpx").setLevel(logging.WARNING)
