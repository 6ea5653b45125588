import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from projects.models import Project


class Command(BaseCommand):
    help = "List, add or remove the console accounts that may administer a project."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--add", action="append", default=[], metavar="USERNAME")
        parser.add_argument("--remove", action="append", default=[], metavar="USERNAME")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **opts):
        project = Project.objects.filter(pk=opts["project"]).first()
        if project is None:
            raise CommandError(f"No project {opts['project']!r}.")
        users = get_user_model()

        def user(name):
            found = users.objects.filter(username=name).first()
            if found is None:
                raise CommandError(f"No user named {name!r}.")
            return found

        project.members.add(*[user(name) for name in opts["add"]])
        project.members.remove(*[user(name) for name in opts["remove"]])
        members = sorted(project.members.values_list("username", flat=True))
        if opts["json"]:
            self.stdout.write(json.dumps({"project": project.pk, "members": members}))
        else:
            self.stdout.write(f"{project.name} ({project.pk}) members: {', '.join(members) or '(none)'}")
