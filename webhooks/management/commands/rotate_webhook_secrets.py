"""Re-encrypt every webhook signing secret with the newest key of THREADLESS_SECRET_STORE_KEYS:
run it beside `rotate_secrets` (which re-encrypts the projects' secret store) before dropping an
old key, or deliveries could no longer be signed."""

import json

from django.core.management.base import BaseCommand, CommandError

from webhooks import services


class Command(BaseCommand):
    help = "Re-encrypt all webhook signing secrets with the newest secret-store key."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **opts):
        rotated, failed = services.secrets_reencrypt()
        if opts["json"]:
            self.stdout.write(json.dumps({"rotated": rotated, "failed": failed}))
        else:
            self.stdout.write(f"Re-encrypted the signing secrets of {rotated} webhook endpoint(s).")
        if failed:
            raise CommandError(
                f"{len(failed)} endpoint(s) have a secret no configured key opens (left unchanged): "
                + ", ".join(failed[:20])
            )
