from django.apps import AppConfig


class ProxyConfig(AppConfig):
    name = "proxy"
    verbose_name = "Provider-compatible proxy"
    default_auto_field = "django.db.models.BigAutoField"
