"""Create (once) and print the demo project, key, agent and staff login.

Kept in the git-ignored var/demo.json, so a later `make run` prints the same working key.
"""

import json
import logging
import os
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from chat.services import agent_ensure_demo
from common.errors import Unauthorized
from common.logformat import json_line
from projects.auth import key_from_plaintext
from projects.models import Project
from projects.services import key_create, project_create


class Command(BaseCommand):
    help = "Create the demo project, key, agent and staff user (once), and print them."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **opts):
        path = settings.VAR_DIR / "demo.json"
        demo = json.loads(path.read_text()) if path.exists() else {}
        project = Project.objects.filter(pk=demo.get("project_id", "")).first()
        if project is None:
            project = project_create(name="Demo project")
            demo = {"project_id": project.id}
        try:
            key_from_plaintext(demo.get("key", ""), used=False)
        except Unauthorized:
            _key, demo["key"] = key_create(project=project, kind="project", name="demo")
        user_model = get_user_model()
        username = demo.get("username", "admin")
        user = user_model.objects.filter(username=username).first()
        if user is None or not user.check_password(demo.get("password", "")):
            demo["username"] = username
            demo["password"] = demo.get("password") or secrets.token_urlsafe(12)
            if user is None:
                user = user_model(username=username, is_staff=True, is_superuser=True)
            user.is_staff = user.is_superuser = True
            user.set_password(demo["password"])
            user.save()
        project.members.add(user)  # console access is per project membership
        demo.update(agent_ensure_demo(project=project, demo=demo))
        path.write_text(json.dumps(demo, indent=2))
        if opts["json"]:
            self.stdout.write(json.dumps(demo))
            return
        # make run passes HOST/PORT on to the web server: print the address it will listen on.
        origin = f"http://{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}"
        if settings.THREADLESS_LOG_FORMAT == "json":
            # One log line like every other, without the login or the keys (logs are shipped).
            self.stdout.write(
                json_line(
                    "threadless.demo",
                    logging.INFO,
                    f"demo: console {origin}/manage/ (login and keys in {path})",
                )
            )
            return
        self.stdout.write(
            "\n".join(
                [
                    "",
                    "Threadless demo",
                    f"  console:     {origin}/manage/   login {demo['username']} / {demo['password']}",
                    f"  project key: {demo['key']}",
                    f"  project id:  {project.id}",
                    *(
                        [
                            f"  demo agent:  {origin}/chat/{demo['agent_slug']}/"
                            + (f"#key={demo['publishable_key']}" if demo.get("publishable_key") else "")
                        ]
                        if demo.get("agent_slug")
                        else []
                    ),
                    "",
                ]
            )
        )
