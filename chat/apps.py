from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "chat"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Under uvicorn the app is loaded after its signal handlers are set: chain ours in front.
        from chat.signals import install_if_uvicorn

        install_if_uvicorn()
        # httpx logs every provider/API request at INFO: too chatty for a server log.
        import logging

        logging.getLogger("httpx").setLevel(logging.WARNING)
