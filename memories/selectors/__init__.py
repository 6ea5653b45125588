"""Reads, by concern; import them from here (`from memories.selectors import memory_get`).

* `memory`: a memory's row (the hot paths' plain read of it), scoped to a project or listed;
* `window`: decorate's reads (the window, the facts, the failures, `ContextReads`), whose
  statements are `sql`'s, composed from named parts;
* `threads`: a memory's threads, the default one made from the memory's counters;
* `records`: what the API and the console list (search, facts, entries, digests, files, outbox).
"""

from memories.selectors.memory import (
    MEMORY_COLUMNS,
    METADATA_KEY_MAX,
    memory_by_external_id,
    memory_fetch,
    memory_from_row,
    memory_get,
    memory_list,
    memory_missing,
    metadata_filter_key,
)
from memories.selectors.records import (
    FILE_INDEX_HEADER,
    FILE_INDEX_MAX,
    SEARCH_MAX,
    OutboxBacklog,
    ParkedJobs,
    digest_list,
    entry_list,
    fact_get,
    fact_list,
    fact_sources,
    file_index_text,
    file_list,
    file_versions,
    message_search,
    outbox_backlog,
    outbox_parked,
)
from memories.selectors.threads import (
    thread_get,
    thread_list,
    thread_newest_at,
    thread_oldest_at,
    thread_view,
)
from memories.selectors.window import (
    FACTS_LIMIT,
    FAILURES_LIMIT,
    FIRST_CHUNK,
    WINDOW_COLUMNS,
    ContextReads,
    Window,
    active_facts,
    failures_in_turns,
    memory_window,
    window_first_chunk,
)

__all__ = [
    "FACTS_LIMIT",
    "FAILURES_LIMIT",
    "FILE_INDEX_HEADER",
    "FILE_INDEX_MAX",
    "FIRST_CHUNK",
    "MEMORY_COLUMNS",
    "METADATA_KEY_MAX",
    "SEARCH_MAX",
    "WINDOW_COLUMNS",
    "ContextReads",
    "OutboxBacklog",
    "ParkedJobs",
    "Window",
    "active_facts",
    "digest_list",
    "entry_list",
    "fact_get",
    "fact_list",
    "fact_sources",
    "failures_in_turns",
    "file_index_text",
    "file_list",
    "file_versions",
    "memory_by_external_id",
    "memory_fetch",
    "memory_from_row",
    "memory_get",
    "memory_list",
    "memory_missing",
    "memory_window",
    "message_search",
    "metadata_filter_key",
    "outbox_backlog",
    "outbox_parked",
    "thread_get",
    "thread_list",
    "thread_newest_at",
    "thread_oldest_at",
    "thread_view",
    "window_first_chunk",
]
