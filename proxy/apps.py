from django.apps import AppConfig

from memories.signals import thread_deleted


class ProxyConfig(AppConfig):
    name = "proxy"
    verbose_name = "Provider-compatible proxy"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The fields held for an Anthropic thread go when that thread is deleted (the handler
        # imports the models, so not before the app registry is ready).
        from proxy.messages import messages_thread_deleted

        thread_deleted.connect(messages_thread_deleted, dispatch_uid="proxy.messages_thread_deleted")
