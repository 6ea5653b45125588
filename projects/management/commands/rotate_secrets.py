"""Re-encrypt every secret in the store with the newest key of THREADLESS_SECRET_STORE_KEYS.

Rotation: put a new key first in THREADLESS_SECRET_STORE_KEYS (keep the old ones after it),
restart, run this command, then drop the old keys. Values encrypted by earlier releases with the
SECRET_KEY-derived key are re-encrypted too.
"""

import json

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from projects import secretbox
from projects.models import Secret


class Command(BaseCommand):
    help = "Re-encrypt all stored secrets with the newest secret-store key."

    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **opts):
        rotated, failed = 0, []
        with transaction.atomic():
            for secret in Secret.objects.select_for_update().order_by("pk"):
                try:
                    token = secretbox.rotate(secret.ciphertext)
                except secretbox.InvalidToken:
                    failed.append(f"{secret.project_id}/{secret.name}")
                    continue
                Secret.objects.filter(pk=secret.pk).update(ciphertext=token)
                rotated += 1
        if opts["json"]:
            self.stdout.write(json.dumps({"rotated": rotated, "failed": failed}))
        else:
            self.stdout.write(f"Re-encrypted {rotated} secret(s) with the newest key.")
        if failed:
            raise CommandError(
                f"{len(failed)} secret(s) could not be decrypted with any configured key "
                f"(left unchanged): {', '.join(failed[:20])}"
            )
