import json

from django.core.management.base import BaseCommand, CommandError

from projects.models import Project
from projects.services import secret_name_reserved
from providers.egress import base_url_refusal, provider_env_names, provider_env_refusal

PROVIDERS = ("openai", "anthropic", "demo")


def _check_model(config: dict) -> None:
    """The background model's provider, baseUrl and key, checked as an agent's llm task is: a key
    from the environment only to a destination THREADLESS_PROVIDER_ENV_ALLOW names for it."""
    if config["provider"] not in PROVIDERS:
        raise CommandError(f"--model.provider: must be one of {', '.join(PROVIDERS)}.")
    base = config.get("baseUrl")
    if base is not None and base_url_refusal(base):
        raise CommandError(f"--model.baseUrl: {base_url_refusal(base)}")
    if secret_name_reserved(config.get("apiKeySecret", "")):
        raise CommandError(
            "--model.apiKeySecret: names a proxy upstream key (proxy.*), which only the proxy may use."
        )
    for field in ("apiKeyEnv", "apiKeySecret"):
        if field in config and (not isinstance(config[field], str) or not config[field].strip()):
            raise CommandError(f"--model.{field}: must be a non-empty string.")
    if "apiKeyEnv" in config:
        name = config["apiKeyEnv"]
        refusal = provider_env_refusal(name, provider=config["provider"], base_url=base)
        if refusal:
            field = "baseUrl" if name in provider_env_names() else "apiKeyEnv"
            raise CommandError(f"--model.{field}: {refusal}")


class Command(BaseCommand):
    help = (
        "Show or set a project's background-memory settings: the model used for fact extraction and "
        "compaction (shaped like an llm task: provider, model, baseUrl, apiKeyEnv/apiKeySecret) and "
        "retention in days."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project id (prj_…)")
        parser.add_argument("--model", help='JSON, e.g. \'{"provider": "openai", "model": "gpt-4o-mini"}\'')
        parser.add_argument("--no-model", action="store_true", help="use the offline rules again")
        parser.add_argument("--retention-days", type=int, help="forget memories unused this long (0 = keep)")

    def handle(self, *args, **opts):
        project = Project.objects.filter(pk=opts["project"]).first()
        if project is None:
            raise CommandError(f"No project '{opts['project']}'.")
        if opts["model"]:
            try:
                config = json.loads(opts["model"])
            except ValueError as exc:
                raise CommandError(f"--model: not JSON ({exc}).") from None
            if not isinstance(config, dict) or not isinstance(config.get("provider"), str):
                raise CommandError("--model: an object with at least a 'provider'.")
            unknown = set(config) - {
                "provider",
                "model",
                "baseUrl",
                "apiKeyEnv",
                "apiKeySecret",
                "params",
                "timeoutMs",
            }
            if unknown:
                raise CommandError(f"--model.{sorted(unknown)[0]}: unknown field.")
            _check_model(config)
            project.model_config = config
        if opts["no_model"]:
            project.model_config = None
        if opts["retention_days"] is not None:
            if opts["retention_days"] < 0:
                raise CommandError("--retention-days: 0 or more.")
            project.retention_days = opts["retention_days"] or None
        project.save(update_fields=["model_config", "retention_days"])
        self.stdout.write(
            json.dumps(
                {
                    "id": project.id,
                    "model_config": project.model_config,
                    "retention_days": project.retention_days,
                }
            )
        )
