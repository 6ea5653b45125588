from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "projects"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from projects.auth import connect_signals

        connect_signals()  # a saved or deleted key or project clears every process's key cache
