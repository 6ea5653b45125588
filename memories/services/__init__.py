"""Writes of the memory core, one module per concern; import them from here.

    memories    external_id_check / metadata_check / memory_allowance_check / memory_create /
                memory_update / memory_delete / memory_delete_many / memory_delete_matching /
                retention_enforce
    entries     memory_lock / entries_append / entries_set_committed / thread_for_write
    turn_store  decorate's store (entries_store_turn / entries_store_thread_turn)
    turn_join   report's write (messages_join_turn_enqueue / messages_join_thread_turn_enqueue)
    statements  the columns and statement pieces those three share
    decorate    memory_decorate / split_instructions
    report      report_accept / validate_failures / failure_record (+ FailureResult)
    outbox      outbox_enqueue / outbox_publish / outbox_claim / outbox_claim_next / outbox_process /
                outbox_process_next / outbox_sweep
    facts       fact_text_check / fact_create / fact_update / fact_delete
    idempotency idempotent_call / idempotent_replay / idempotent_store / check_idempotency_key
    threads     thread_open / thread_delete / messages_import (the history import)

Nothing here calls a model, and nothing here queues a task by importing it (memories.queue).
Projects and keys are `projects.services`; export and import are `memories.transfer`, which
builds on these.
"""

from memories.services.decorate import MAX_BUDGET, memory_decorate, split_instructions
from memories.services.entries import entries_append, entries_set_committed, memory_lock, thread_for_write
from memories.services.facts import fact_create, fact_delete, fact_text_check, fact_update
from memories.services.idempotency import (
    check_idempotency_key,
    idempotent_call,
    idempotent_replay,
    idempotent_store,
)
from memories.services.memories import (
    external_id_check,
    memory_allowance_check,
    memory_create,
    memory_delete,
    memory_delete_many,
    memory_delete_matching,
    memory_update,
    metadata_check,
    retention_enforce,
)
from memories.services.outbox import (
    outbox_claim,
    outbox_claim_next,
    outbox_enqueue,
    outbox_process,
    outbox_process_next,
    outbox_publish,
    outbox_sweep,
)
from memories.services.report import FailureResult, failure_record, report_accept, validate_failures
from memories.services.threads import messages_import, thread_delete, thread_open

__all__ = [
    "MAX_BUDGET",
    "FailureResult",
    "check_idempotency_key",
    "entries_append",
    "external_id_check",
    "entries_set_committed",
    "fact_create",
    "fact_delete",
    "fact_text_check",
    "fact_update",
    "failure_record",
    "idempotent_call",
    "idempotent_replay",
    "idempotent_store",
    "memory_allowance_check",
    "memory_create",
    "memory_decorate",
    "memory_delete",
    "memory_delete_many",
    "memory_delete_matching",
    "memory_lock",
    "memory_update",
    "metadata_check",
    "messages_import",
    "outbox_claim",
    "outbox_claim_next",
    "outbox_enqueue",
    "outbox_process",
    "outbox_process_next",
    "outbox_publish",
    "outbox_sweep",
    "report_accept",
    "retention_enforce",
    "split_instructions",
    "thread_delete",
    "thread_for_write",
    "thread_open",
    "validate_failures",
]
