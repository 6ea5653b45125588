from django.core.management.base import BaseCommand, CommandError

from common.errors import NotFound
from projects.services import key_revoke


class Command(BaseCommand):
    help = "Revoke an API key by its visible prefix (tl_proj_… / tl_pub_…)."

    def add_arguments(self, parser):
        parser.add_argument("prefix")

    def handle(self, *args, **opts):
        try:
            key = key_revoke(prefix=opts["prefix"])
        except NotFound as exc:
            raise CommandError(exc.message)
        self.stdout.write(f"Revoked {key.prefix}")
