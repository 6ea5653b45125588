import json

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from projects.services import project_create


def _demo_username() -> str:
    path = settings.VAR_DIR / "demo.json"
    try:
        return json.loads(path.read_text()).get("username", "") if path.exists() else ""
    except (OSError, ValueError):
        return ""


class Command(BaseCommand):
    help = "Create a project (tenant)."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--rate-limit", type=int, default=None, help="requests per minute per key")
        parser.add_argument(
            "--member",
            action="append",
            default=[],
            metavar="USERNAME",
            help="a console (staff) account that may administer the project; repeatable. "
            "Default: the demo staff user of bootstrap_demo, when there is one",
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **opts):
        users = get_user_model()
        names = opts["member"] or [name for name in [_demo_username()] if name]
        members = []
        for name in names:
            user = users.objects.filter(username=name).first()
            if user is None:
                if opts["member"]:
                    raise CommandError(f"No user named {name!r}.")
                continue
            members.append(user)
        project = project_create(name=opts["name"], rate_limit_per_minute=opts["rate_limit"])
        project.members.add(*members)
        usernames = [user.get_username() for user in members]
        if opts["json"]:
            self.stdout.write(json.dumps({"id": project.id, "name": project.name, "members": usernames}))
        else:
            self.stdout.write(
                f"Created project {project.name}: {project.id}"
                + (f" (members: {', '.join(usernames)})" if usernames else "")
            )
