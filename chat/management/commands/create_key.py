import json

from django.core.management.base import BaseCommand, CommandError

from chat.models import Agent
from projects.models import Project
from projects.services import key_create


class Command(BaseCommand):
    help = "Create an API key and print it once (it is stored only as a hash)."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project id (prj_…)")
        parser.add_argument("--kind", choices=["project", "publishable"], default="project")
        parser.add_argument("--agent", default="", help="agent slug (publishable keys)")
        parser.add_argument("--name", default="")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **opts):
        project = Project.objects.filter(pk=opts["project"]).first()
        if project is None:
            raise CommandError(f"No project {opts['project']!r}.")
        agent_id = ""
        if opts["kind"] == "publishable":
            if not opts["agent"]:
                raise CommandError("A publishable key needs --agent SLUG.")

            agent = Agent.objects.filter(project=project, slug=opts["agent"]).first()
            if agent is None:
                raise CommandError(f"No agent with slug {opts['agent']!r} in this project.")
            agent_id = agent.id
        key, plaintext = key_create(project=project, kind=opts["kind"], agent_id=agent_id, name=opts["name"])
        if opts["json"]:
            self.stdout.write(
                json.dumps(
                    {"key": plaintext, "prefix": key.prefix, "kind": key.kind, "project_id": project.id}
                )
            )
        else:
            self.stdout.write(f"{plaintext}\n(shown once; prefix {key.prefix})")
