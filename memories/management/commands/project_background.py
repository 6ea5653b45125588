import json

from django.core.management.base import BaseCommand, CommandError

from memories.models import Project


class Command(BaseCommand):
    help = ("Show or set a project's background-memory settings: the model used for fact extraction and "
            "compaction (shaped like an llm task: provider, model, baseUrl, apiKeyEnv/apiKeySecret) and "
            "retention in days.")

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
            unknown = set(config) - {"provider", "model", "baseUrl", "apiKeyEnv", "apiKeySecret", "params", "timeoutMs"}
            if unknown:
                raise CommandError(f"--model.{sorted(unknown)[0]}: unknown field.")
            project.model_config = config
        if opts["no_model"]:
            project.model_config = None
        if opts["retention_days"] is not None:
            if opts["retention_days"] < 0:
                raise CommandError("--retention-days: 0 or more.")
            project.retention_days = opts["retention_days"] or None
        project.save(update_fields=["model_config", "retention_days"])
        self.stdout.write(json.dumps({"id": project.id, "model_config": project.model_config,
                                      "retention_days": project.retention_days}))
