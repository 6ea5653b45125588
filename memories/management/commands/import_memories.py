import json

from django.core.management.base import BaseCommand, CommandError

from common.errors import ApiError
from memories.transfer import memory_import
from projects.models import Project


class Command(BaseCommand):
    help = (
        "Import exported memory documents (JSON Lines, from export_memories or GET /v1/memories/{id}/export) "
        "into a project, each all or nothing; importing the same document again changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project id (prj_…) to import into")
        parser.add_argument("files", nargs="+", help="exported .jsonl documents")
        parser.add_argument("--json", action="store_true", help="print one JSON line per file")

    def handle(self, *args, project: str, files: list[str], **options):
        found = Project.objects.filter(pk=project).first()
        if found is None:
            raise CommandError(f"No project {project!r}.")
        failed = 0
        for name in files:
            try:
                with open(name, "rb") as handle:
                    memory, created = memory_import(project=found, lines=handle)
            except OSError as exc:
                failed += 1
                self.stderr.write(f"{name}: cannot read ({exc.strerror}).")
                continue
            except ApiError as exc:
                failed += 1
                self.stderr.write(f"{name}: refused, nothing imported: {exc.message}")
                continue
            if options["json"]:
                self.stdout.write(json.dumps({"file": name, "id": memory.pk, "created": created}))
            else:
                self.stdout.write(
                    f"{name}: {'imported as' if created else 'already imported as'} {memory.pk}"
                )
        if failed:
            raise CommandError(f"{failed} of {len(files)} file(s) refused.")
