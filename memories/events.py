"""What the memory core tells webhooks (SPEC 4.12): one function per event, each called once, in
the transaction that made the change, so the event is queued with it or not at all.

A project without an endpoint that wants the event pays one small read (`endpoints_for`) and
writes nothing. `data` holds ids and counts; message and fact text goes in `text`, which only
endpoints that opted in receive. Nothing here sends anything: webhooks.services delivers after
commit.
"""

from __future__ import annotations

from memories.models import ErrorDigest, Fact, Memory, Outbox
from webhooks.selectors import endpoints_for
from webhooks.services import event_emit


def _emit(
    memory: Memory,
    type: str,
    data: dict,
    *,
    thread: str | None = None,
    text: dict | None = None,
    endpoints=None,
) -> None:
    if endpoints is None:
        endpoints = endpoints_for(project_id=memory.project_id, type=type)
    if not endpoints:
        return
    subject = {"memory_id": memory.pk, "external_id": memory.external_id}
    if thread is not None:
        subject["thread"] = thread
    event_emit(
        endpoints=endpoints, type=type, project_id=memory.project_id, data={**subject, **data}, text=text
    )


def memory_processed(row: Outbox) -> None:
    """A report's (or an import's) background work is done: its last job finished."""
    if endpoints_for(project_id=row.project_id, type="memory.processed"):
        memory = Memory.objects.filter(pk=row.memory_id).first()
        if memory is not None:
            _emit(memory, "memory.processed", {"upto_seq": row.payload.get("to_seq") or memory.last_seq})


def _fact_data(fact: Fact) -> dict:
    return {"fact_id": fact.pk, "slot": fact.slot or None, "extractor": fact.extractor}


def fact_created(memory: Memory, fact: Fact) -> None:
    _emit(memory, "fact.created", _fact_data(fact), text={"text": fact.text})


def fact_superseded(old: Fact, new: Fact) -> None:
    _emit(
        new.memory,
        "fact.superseded",
        {**_fact_data(old), "superseded_by": new.pk},
        text={"text": old.text, "superseded_by_text": new.text},
    )


def fact_deleted(fact: Fact, receipt: dict) -> None:
    _emit(fact.memory, "fact.deleted", {**_fact_data(fact), "deleted": receipt})


def digest_created(memory: Memory, digest: ErrorDigest) -> None:
    """A task failed under the memory policy: the digest's text is what the model is shown."""
    _emit(
        memory,
        "digest.created",
        {
            "digest_id": digest.pk,
            "turn": digest.turn,
            "task_id": digest.task_id,
            "task_type": digest.task_type,
            "error_type": digest.error_type,
            "text": digest.text,
        },
        thread=digest.thread,
    )


def thread_deleted(memory: Memory, name: str, receipt: dict) -> None:
    _emit(memory, "thread.deleted", {"deleted": receipt}, thread=name)


def memories_deleted(memory_ids: list[str], receipt: dict) -> None:
    """Before the rows go: one event per memory (a batch shares its receipt, counted for all)."""
    memories = list(Memory.objects.filter(pk__in=memory_ids).only("id", "project_id", "external_id"))
    for project_id in {m.project_id for m in memories}:
        endpoints = endpoints_for(project_id=project_id, type="memory.deleted")
        for memory in memories if endpoints else []:
            if memory.project_id == project_id:
                data = {"deleted": receipt, "batch": len(memory_ids)}
                _emit(memory, "memory.deleted", data, endpoints=endpoints)


def import_completed(memory: Memory, data: dict, *, thread: str | None = None) -> None:
    _emit(memory, "import.completed", data, thread=thread)
