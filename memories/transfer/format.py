"""The document's shape, shared by its writer (`exporting`) and its reader (`document`): the
format's name and version, and the fields each record carries. A field added here is exported
and imported both; its rule for an import is in `rules`."""

FORMAT = "threadless.memory"
VERSION = 2
CHUNK = 2000  # rows an export reads at once (and an import indexes at once)

MEMORY_FIELDS = (
    "external_id",
    "metadata",
    "instructions",
    "policy",
    "summary",
    "summary_upto_seq",
    "last_budget_tokens",
    "last_seq",
    "last_turn",
    "turn_start_seq",
    "message_count",
    "token_count",
    "digest_count",
)
THREAD_FIELDS = ("name", "last_turn", "turn_start_seq", "summary", "summary_upto_seq", "last_budget_tokens")
THREAD_COUNTS = ("message_count", "token_count")
TURN_FIELDS = (
    "thread",
    "number",
    "state",
    "input",
    "actions",
    "task_errors",
    "output",
    "attempt",
    "duration_ms",
)
ENTRY_FIELDS = (
    "thread",
    "seq",
    "turn",
    "kind",
    "role",
    "content",
    "parts",
    "name",
    "tool_calls",
    "tool_call_id",
    "task_id",
    "key",
    "value",
    "committed",
    "tokens",
)
DIGEST_FIELDS = ("thread", "turn", "task_id", "task_type", "error_type", "agent_id", "text", "raw_error")
FACT_FIELDS = ("text", "normalized", "slot", "extractor", "confidence", "active", "tokens")
FILE_FIELDS = ("path", "is_dir", "content", "version", "changed_by")
FILE_VERSION_FIELDS = ("path", "version", "content", "changed_by", "command")
