import json
import sys

from django.core.management.base import BaseCommand, CommandError

from common.errors import ApiError
from projects.models import Project
from proxy import services


class Command(BaseCommand):
    help = (
        "Show or set a project's proxy upstream for one provider: base URL and key (the key goes into the "
        "project's encrypted secret store). With no setting option it prints the current settings."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project id (prj_…)")
        parser.add_argument("--provider", choices=["openai", "anthropic"], help="omit to show both")
        parser.add_argument("--base-url", help="upstream base URL ('' = the provider's official API)")
        parser.add_argument("--api-key-stdin", action="store_true", help="read the upstream key from stdin")
        parser.add_argument("--remove-key", action="store_true", help="delete the stored upstream key")
        parser.add_argument("--api-key-env", help="a THREADLESS_PROVIDER_ENV_ALLOW name ('' clears it)")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **opts):
        project = Project.objects.filter(pk=opts["project"]).first()
        if project is None:
            raise CommandError(f"No project {opts['project']!r}.")
        changes = {}
        if opts["base_url"] is not None:
            changes["base_url"] = opts["base_url"] or None
        if opts["api_key_env"] is not None:
            changes["api_key_env"] = opts["api_key_env"] or None
        if opts["remove_key"]:
            changes["api_key"] = None
        elif opts["api_key_stdin"]:
            value = sys.stdin.readline().strip()
            if not value:
                raise CommandError("No key on stdin.")
            changes["api_key"] = value
        if changes:
            if not opts["provider"]:
                raise CommandError("Say which upstream to set with --provider openai|anthropic.")
            try:
                saved = services.upstream_setting_set(project=project, provider=opts["provider"], **changes)
            except ApiError as exc:
                raise CommandError(exc.message) from None
            if saved["api_key_cleared"]:
                self.stderr.write(
                    "The stored key was removed: it belonged to the previous base URL "
                    "(pass --api-key-stdin with --base-url to keep one)."
                )
        shown = services.upstream_settings(project=project)
        if opts["provider"]:
            shown = {opts["provider"]: shown[opts["provider"]]}
        if opts["json"]:
            self.stdout.write(json.dumps(shown))
            return
        for name, item in shown.items():
            key = (
                "stored"
                if item["api_key_set"]
                else (f"env {item['api_key_env']}" if item["api_key_env"] else "none")
            )
            self.stdout.write(f"{name}: {item['effective_base_url']} (key: {key})")
