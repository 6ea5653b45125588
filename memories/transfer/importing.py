"""The import: a checked document (`document`) written as a new memory, all or nothing.

The whole document is read and checked first, with no transaction open and no lock taken, every
row it makes built as the parameters of its INSERT. Only then does it write: one transaction of a
few multi-row INSERTs, under the writers' lock on SQLite (common.db.write_atomic), so the other
writers of the database wait for the write alone, never for the reading. A refusal names the
line and the field, and nothing is written. Importing the same document again into the same
project answers the memory the first import made (keyed by the document's digest)."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import IntegrityError, connection

from common.db import write_atomic
from common.errors import Conflict
from memories import embeddings, events, recall, services
from memories.models import IdempotencyRecord, Memory
from memories.services.outbox import outbox_enqueue
from memories.transfer.document import document_read
from memories.transfer.format import CHUNK
from projects.models import Project

IMPORT_SCOPE = "memory-import"


def _previous_import(project: Project, digest: str) -> Memory | None:
    record = IdempotencyRecord.objects.filter(project=project, scope=IMPORT_SCOPE, key=digest).first()
    if record is None:
        return None
    return Memory.objects.filter(project=project, pk=bytes(record.body).decode()).first()


def _taken(project: Project, external_id: str | None) -> bool:
    return (
        external_id is not None and Memory.objects.filter(project=project, external_id=external_id).exists()
    )


def _external_id_conflict() -> Conflict:
    return Conflict(
        "A memory with this external_id already exists in the project.",
        hint="Delete that memory first, or import into another project.",
    )


def memory_import(*, project: Project, lines: Iterable[bytes]) -> tuple[Memory, bool]:
    """Bring an exported document into `project` as a new memory, all or nothing: (memory,
    created). The same document imported again answers the memory its first import made. A new
    memory counts against the plan's allowance, as one made by the API does (429)."""
    document = document_read(project, lines)
    earlier = _previous_import(project, document.digest)
    if earlier is not None:
        return earlier, False
    external_id = document.memory["external_id"]
    try:
        with write_atomic():
            # Again inside the write: another import may have committed since the reads above.
            earlier = _previous_import(project, document.digest)
            if earlier is not None:
                return earlier, False
            if _taken(project, external_id):
                raise _external_id_conflict()
            services.memory_allowance_check(project=project)
            with connection.cursor() as cursor:
                indexed = document.write(cursor)
            mark = {"project": project, "scope": IMPORT_SCOPE, "key": document.digest}
            IdempotencyRecord.objects.filter(**mark).delete()  # an earlier import whose memory is gone
            IdempotencyRecord.objects.create(**mark, status=201, body=document.memory_pk.encode())
            for start in range(0, len(indexed), CHUNK):
                recall.index_entries(memory_id=document.memory_pk, entry_ids=indexed[start : start + CHUNK])
            if embeddings.enabled(project):
                # The imported messages' vectors, made by the worker in bounded chunks (vectors jobs,
                # each taking its turn with other projects' work): until then decorate answers as a
                # memory without vectors would.
                outbox_enqueue(
                    memory_id=document.memory_pk, project_id=project.id, kind="vectors", payload={}
                )
            events.import_completed(Memory.objects.get(pk=document.memory_pk), {"source": "document"})
    except IntegrityError:
        # PostgreSQL, where imports write side by side: another one committed this document, or a
        # memory with this external id, first.
        earlier = _previous_import(project, document.digest)
        if earlier is not None:
            return earlier, False
        if _taken(project, external_id):
            raise _external_id_conflict()
        raise
    return Memory.objects.get(pk=document.memory_pk), True
