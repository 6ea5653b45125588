import json

from django.core.management.base import BaseCommand

from memories.services import project_create


class Command(BaseCommand):
    help = "Create a project (tenant)."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--rate-limit", type=int, default=None, help="requests per minute per key")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **opts):
        project = project_create(name=opts["name"], rate_limit_per_minute=opts["rate_limit"])
        if opts["json"]:
            self.stdout.write(json.dumps({"id": project.id, "name": project.name}))
        else:
            self.stdout.write(f"Created project {project.name}: {project.id}")
