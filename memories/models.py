"""Memories and everything a memory is made of (projects and keys live in `projects`).

Entries are the hot table: decorate reads the newest committed messages of one memory through
`entry_window_idx`, so its cost follows the window, never the memory's size.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.utils import timezone

from common.ids import make_id
from projects.models import Project


def memory_id() -> str:
    return make_id("mem_")


def fact_id() -> str:
    return make_id("fact_", 16)


class Memory(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=memory_id, editable=False)
    # No index of its own: memory_list_idx (project, -created_at, id) serves every project_id lookup.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memories", db_index=False)
    external_id = models.CharField(max_length=200, null=True, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    instructions = models.TextField(blank=True, default="")
    policy = models.JSONField(default=dict, blank=True)
    summary = models.TextField(blank=True, default="")
    summary_upto_seq = models.PositiveBigIntegerField(default=0)
    last_budget_tokens = models.PositiveIntegerField(default=60000)
    # Sequence and turn counters, advanced under a row lock when entries are written.
    last_seq = models.PositiveBigIntegerField(default=0)
    last_turn = models.PositiveIntegerField(default=0)
    # The first seq of turn `last_turn` (set by whatever opens a turn), so report's write, which
    # joins that turn, needs no read of the entries to find where it starts; 0 when not known
    # (a memory with no turn, or whose counters were set by hand): report then starts from its own rows.
    turn_start_seq = models.PositiveBigIntegerField(default=0)
    # Counts kept in step by the services (cheap GET, no COUNT over a large memory).
    message_count = models.PositiveIntegerField(default=0)
    token_count = models.PositiveBigIntegerField(default=0)
    digest_count = models.PositiveIntegerField(default=0)
    # Background work (recall index, facts) has covered entries up to here; a later run starts
    # from the first gap, so turns stored without a report are caught up too.
    background_upto_seq = models.PositiveBigIntegerField(default=0)
    # What the named threads (`Thread` rows) hold of the counts above: the row itself is the
    # default thread's (its turn counters and summary above), whose counts are the rest.
    threads_message_count = models.PositiveIntegerField(default=0)
    threads_token_count = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_used_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "external_id"],
                condition=Q(external_id__isnull=False),
                name="memory_project_external_id",
            )
        ]
        indexes = [models.Index(fields=["project", "-created_at", "id"], name="memory_list_idx")]

    def __str__(self) -> str:
        return self.id


DEFAULT_THREAD = "default"


class Thread(models.Model):
    """A named thread: one conversation of the memory's subject, with its own turn counters,
    rolling summary and counts (kept in step by the writes, so a list or a detail counts nothing).

    The default thread has no row: its turn counters and summary are the memory row's own (every
    memory had exactly that before threads), and its counts are the memory's less its threads'."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="threads", db_index=False)
    name = models.CharField(max_length=200)
    last_turn = models.PositiveIntegerField(default=0)
    turn_start_seq = models.PositiveBigIntegerField(default=0)
    summary = models.TextField(blank=True, default="")
    summary_upto_seq = models.PositiveBigIntegerField(default=0)
    last_budget_tokens = models.PositiveIntegerField(
        default=60000
    )  # its last decorate's: what compaction keeps
    message_count = models.PositiveIntegerField(default=0)
    token_count = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)  # the newest entry's time: the list's order

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "name"], name="thread_memory_name")]
        indexes = [models.Index(fields=["memory", "-updated_at", "-name"], name="thread_activity_idx")]

    def __str__(self) -> str:
        return f"{self.memory_id}/{self.name}"


class Turn(models.Model):
    class State(models.TextChoices):
        READY = "READY"
        IN_PROGRESS = "IN_PROGRESS"
        ERROR = "ERROR"
        EXECUTION_INTERRUPTED = "EXECUTION_INTERRUPTED"
        ENDED = "ENDED"

    # No index of its own: the unique (memory, number) constraint's index serves every memory_id lookup.
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="turns", db_index=False)
    # Turn numbers count per thread. A database default as well, so a write that names no thread
    # (the default thread's one-statement paths) stores "default".
    thread = models.CharField(max_length=200, default=DEFAULT_THREAD, db_default=DEFAULT_THREAD)
    number = models.PositiveIntegerField()
    state = models.CharField(max_length=24, choices=State.choices, default=State.READY)
    input = models.TextField(blank=True, default="")
    actions = models.JSONField(default=list, blank=True)
    task_errors = models.JSONField(default=list, blank=True)
    output = models.JSONField(default=list, blank=True)
    attempt = models.PositiveIntegerField(default=1)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["memory", "thread", "number"], name="turn_memory_thread_number")
        ]

    # The pipeline (chat.runner) holds a running turn by its lease; these are the one place that
    # decides whether a lease is still live.
    @property
    def lease_expired(self) -> bool:
        """The turn's lease ran out: whatever held it (a process that died) no longer runs it."""
        return self.lease_expires_at is not None and self.lease_expires_at < timezone.now()

    @property
    def is_running(self) -> bool:
        """IN_PROGRESS and held by a live lease (an expired lease reads as EXECUTION_INTERRUPTED)."""
        return self.state == self.State.IN_PROGRESS and not self.lease_expired

    @classmethod
    def running(cls) -> Q:
        """The same test as `is_running`, as a filter (turns held by a live lease right now)."""
        return Q(state=cls.State.IN_PROGRESS, lease_expires_at__gt=timezone.now())


class Entry(models.Model):
    class Kind(models.TextChoices):
        MESSAGE = "message"
        DATA = "data"
        ERROR = "error"
        DIGEST = "digest"
        ACTION = "action"

    # No index of its own: the unique (memory, seq) constraint's index serves every memory_id lookup.
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="entries", db_index=False)
    # The conversation it belongs to (a database default too: see Turn.thread); seq stays unique
    # and ordered across the memory, `turn` counts in the thread.
    thread = models.CharField(max_length=200, default=DEFAULT_THREAD, db_default=DEFAULT_THREAD)
    seq = models.PositiveBigIntegerField()
    turn = models.PositiveIntegerField()
    kind = models.CharField(max_length=8, choices=Kind.choices)
    role = models.CharField(max_length=16, blank=True, default="")
    # String content lives in `content`; a list of parts (text + images…) in `parts`.
    content = models.TextField(blank=True, default="")
    parts = models.JSONField(null=True, blank=True)
    name = models.CharField(max_length=200, blank=True, default="")
    tool_calls = models.JSONField(null=True, blank=True)
    tool_call_id = models.CharField(max_length=200, blank=True, default="")
    task_id = models.CharField(max_length=200, blank=True, default="")
    key = models.CharField(max_length=200, blank=True, default="")  # data entries: storeAs key
    value = models.JSONField(null=True, blank=True)  # data entries: the stored value
    committed = models.BooleanField(default=True)
    tokens = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "seq"], name="entry_memory_seq")]
        indexes = [
            # decorate's window: newest committed messages first, as an index range scan. (The
            # unique (memory, seq) index read backwards could serve it and save every stored message
            # a b-tree, ~12 µs of PostgreSQL's CPU, but where messages are a minority of a table's
            # rows the planner reads a memory's whole entries and sorts instead: docs/tuning/serving.md.)
            models.Index(
                fields=["memory", "thread", "-seq"],
                condition=Q(kind="message", committed=True),
                name="entry_window_idx",
            ),
            # decorate's failures block: committed digests and errors of the window's turns. Partial,
            # like the window's, so a message (nearly every insert) enters neither: one b-tree less
            # per report and per stored decorate (docs/tuning/serving.md).
            models.Index(
                fields=["memory", "thread", "turn"],
                condition=Q(kind__in=("digest", "error"), committed=True),
                name="entry_failure_idx",
            ),
            # the pipeline's stored data (chat.tasktypes.base: newest committed data entries first).
            models.Index(
                fields=["memory", "-seq"], condition=Q(kind="data", committed=True), name="entry_data_idx"
            ),
            # console timeline, a turn's entries: by turn (also the pipeline's reads of one turn).
            models.Index(fields=["memory", "thread", "turn", "seq"], name="entry_turn_idx"),
        ]

    @property
    def is_visible_to_model(self) -> bool:
        return self.committed and self.kind in (self.Kind.MESSAGE, self.Kind.DIGEST, self.Kind.ERROR)


class Fact(models.Model):
    id = models.CharField(primary_key=True, max_length=40, default=fact_id, editable=False)
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="facts")
    text = models.TextField()
    normalized = models.CharField(max_length=500, db_index=True)
    slot = models.CharField(max_length=100, blank=True, default="")
    source_entry_ids = models.JSONField(default=list, blank=True)
    # api | console | rules | llm, or one of them behind "imported:" (memories.facts.store.IMPORTED)
    extractor = models.CharField(max_length=32, default="api")
    confidence = models.FloatField(default=1.0)
    # A superseded fact is kept as history and never shown to the model.
    superseded_by = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL)
    active = models.BooleanField(default=True)
    tokens = models.PositiveIntegerField(default=0)
    # When it held: from the time of the message that said it (null for a fact a person wrote)
    # until the time of the message that superseded it (null while it holds).
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_to = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["memory", "active", "-updated_at"], name="fact_active_idx")]


class FactTombstone(models.Model):
    """A person deleted or edited a fact: extraction must not bring it back.

    Blocks the same normalised text for good, and the same slot for statements made up to
    `upto_seq` (the memory's sequence when the person acted), so a re-run cannot re-add it.
    """

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="fact_tombstones")
    normalized = models.CharField(max_length=500)
    slot = models.CharField(max_length=100, blank=True, default="")
    upto_seq = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["memory", "normalized"], name="fact_tombstone_idx")]


class ErrorDigest(models.Model):
    """One error digest (also stored as a `digest` entry), for ops inspection."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="digests")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="digests")
    entry = models.OneToOneField(Entry, null=True, blank=True, on_delete=models.CASCADE)
    thread = models.CharField(max_length=200, default=DEFAULT_THREAD, db_default=DEFAULT_THREAD)
    turn = models.PositiveIntegerField()
    task_id = models.CharField(max_length=200)
    task_type = models.CharField(max_length=32, blank=True, default="reported")
    error_type = models.CharField(max_length=32, blank=True, default="unknown")
    agent_id = models.CharField(max_length=40, blank=True, default="")
    text = models.CharField(max_length=250)
    raw_error = models.TextField(blank=True, default="")  # secret-redacted, staff only
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["project", "-created_at"], name="digest_project_idx"),
            models.Index(fields=["project", "task_id"], name="digest_task_idx"),
        ]

    def as_json(self) -> dict:
        return {"type": "errorDigest", "taskId": self.task_id, "text": self.text}


class Outbox(models.Model):
    """Background work queued in the same transaction as the write that needs it: a `report` job
    (index, facts, compaction, the new messages' vectors over `payload`'s seq range) or a `vectors`
    job (one chunk of the memory's missing vectors: an import, a model change)."""

    # No index of its own: outbox_memory_idx (memory, processed_at) serves every memory_id lookup.
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="outbox", db_index=False)
    # The memory's project, written with the row: the worker takes waiting rows project by project
    # (outbox_waiting_idx). NULL only on rows processed before the column existed.
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, null=True, related_name="+", db_index=False
    )
    kind = models.CharField(max_length=32, default="report")
    payload = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    processed_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # Set when the row failed THREADLESS_OUTBOX_MAX_ATTEMPTS times: no worker takes it again, and
    # `last_error` holds the last failure's reason, redacted (the console's Overview shows both).
    parked_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")

    class Meta:
        indexes = [
            models.Index(fields=["processed_at", "claimed_at"], name="outbox_pending_idx"),
            models.Index(fields=["memory", "processed_at"], name="outbox_memory_idx"),
            # Waiting rows only, by project: the worker's turn-taking reads which projects wait and
            # each one's oldest row from it, never the whole backlog (outbox_claim_next).
            models.Index(
                fields=["project", "id"],
                name="outbox_waiting_idx",
                condition=Q(processed_at=None, parked_at=None),
            ),
        ]


class OutboxTurn(models.Model):
    """When the worker last started a job of this project: the next job is the oldest waiting one
    of the project whose turn is the oldest (never served first), round-robin across projects
    (memories.services.outbox.outbox_claim_next)."""

    project = models.OneToOneField(Project, primary_key=True, on_delete=models.CASCADE, related_name="+")
    served_at = models.DateTimeField(null=True)


class IdempotencyRecord(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE)
    key = models.CharField(max_length=200)
    scope = models.CharField(max_length=120)  # operation + memory id
    status = models.PositiveSmallIntegerField()
    body = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "scope", "key"], name="idempotency_unique"),
        ]


class RecallVector(models.Model):
    """A message's embedding for semantic recall (memories/embeddings/store.py owns these rows): float32
    bytes with the model that made them and their dimension, so two models never mix, and the same
    vectors' sign bits (`codes`: dim/8 bytes a vector, scanned for candidates over the whole memory)."""

    entry = models.OneToOneField(Entry, primary_key=True, on_delete=models.CASCADE, related_name="+")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+")
    seq = models.PositiveBigIntegerField()
    model = models.CharField(max_length=200)
    dim = models.PositiveSmallIntegerField()
    vector = models.BinaryField()
    codes = models.BinaryField(default=b"")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["memory", "model", "-seq"], name="recall_vector_idx")]


class MemoryFile(models.Model):
    """A file (or directory) under a memory's virtual `/memories` folder: the backend of
    Anthropic's memory tool. `path` is relative to `/memories` ("notes.md", "projects/a.md");
    a directory has `is_dir` and no content. Written only by memories.services.files, under the
    memory's row lock, so concurrent writers never lose an update."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="files")
    path = models.CharField(max_length=512)
    is_dir = models.BooleanField(default=False)
    content = models.TextField(blank=True, default="")
    size = models.PositiveIntegerField(default=0)  # UTF-8 bytes of `content`
    version = models.PositiveIntegerField(default=1)
    changed_by = models.CharField(max_length=120, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "path"], name="memory_file_path")]


class MemoryFileVersion(models.Model):
    """The content a change replaced (like a superseded fact): kept for the console, never shown
    to the model. `changed_by`/`changed_at` say who wrote this content, `replaced_by`/`command`
    what replaced it."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="file_versions")
    path = models.CharField(max_length=512)
    version = models.PositiveIntegerField()
    content = models.TextField(blank=True, default="")
    size = models.PositiveIntegerField(default=0)
    changed_by = models.CharField(max_length=120, blank=True, default="")
    changed_at = models.DateTimeField()
    command = models.CharField(max_length=20)  # str_replace | insert | delete | rename | create
    replaced_by = models.CharField(max_length=120, blank=True, default="")
    replaced_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["memory", "path", "-version"], name="memory_file_version_idx")]
