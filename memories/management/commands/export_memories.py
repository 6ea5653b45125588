from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from memories.models import Memory
from memories.transfer import memory_export
from projects.models import Project


class Command(BaseCommand):
    help = (
        "Export memories as versioned JSON Lines documents (one per memory; the format is described in "
        "memories/transfer/). With one --memory and no --output, the document goes to stdout."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="project id (prj_…)")
        parser.add_argument(
            "--memory", action="append", default=[], help="memory id (repeatable; default: all)"
        )
        parser.add_argument("--output", help="a directory: one <memory id>.jsonl file per memory")

    def handle(self, *args, project: str, memory: list[str], output: str | None, **options):
        found = Project.objects.filter(pk=project).first()
        if found is None:
            raise CommandError(f"No project {project!r}.")
        memories = Memory.objects.filter(project=found).order_by("created_at", "id")
        if memory:
            memories = memories.filter(pk__in=memory)
            missing = set(memory) - set(memories.values_list("pk", flat=True))
            if missing:
                raise CommandError(f"No such memory in this project: {', '.join(sorted(missing))}.")
        if output is None:
            if len(memory) != 1:
                raise CommandError("--output DIR is needed unless exactly one --memory is given.")
            for line in memory_export(memory=memories.get()):
                self.stdout.buffer.write(line) if hasattr(self.stdout, "buffer") else self.stdout.write(
                    line.decode(), ending=""
                )
            return
        folder = Path(output)
        folder.mkdir(parents=True, exist_ok=True)
        count = 0
        for item in memories.iterator():
            path = folder / f"{item.pk}.jsonl"
            partial = path.with_suffix(".jsonl.partial")
            with partial.open("wb") as out:
                for line in memory_export(memory=item):
                    out.write(line)
            partial.replace(path)  # a file that exists is a whole document
            count += 1
        self.stderr.write(f"Exported {count} memor{'y' if count == 1 else 'ies'} to {folder}.")
