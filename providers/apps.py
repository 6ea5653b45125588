from django.apps import AppConfig


class ProvidersConfig(AppConfig):
    name = "providers"
    verbose_name = "Model providers and egress"
    default_auto_field = "django.db.models.BigAutoField"
