"""The recall index carries each message's thread, so a search of one thread (SPEC 4.10) is one
bounded read of that thread's rows instead of the memory's best rows filtered afterwards.

SQLite: an FTS5 table cannot gain a column, so the table is made again with a `thread` column and a
second token in `mkey` naming the thread (memories.recall.index.thread_key), its rows copied with
their entries' threads. PostgreSQL: a column (its constant default adds it without a rewrite) set
from the entries of named threads, and a (memory_id, thread, seq) index for the newest-first read.
"""

from django.db import migrations

SQLITE_COLUMNS = "body, mkey, memory_id, seq, turn, role, created_at"
SQLITE_FORWARD = [
    "ALTER TABLE memories_recall RENAME TO memories_recall_old",
    "CREATE VIRTUAL TABLE memories_recall USING fts5("
    "body, mkey, memory_id UNINDEXED, seq UNINDEXED, turn UNINDEXED, role UNINDEXED, created_at UNINDEXED, "
    "thread UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2')",
    f"INSERT INTO memories_recall (rowid, {SQLITE_COLUMNS}, thread) "
    "SELECT r.rowid, r.body, r.mkey || ' t' || lower(hex(e.thread)), r.memory_id, r.seq, r.turn, r.role, "
    "r.created_at, e.thread FROM memories_recall_old r JOIN memories_entry e ON e.id = r.rowid",
    "DROP TABLE memories_recall_old",
]
SQLITE_BACKWARD = [
    "ALTER TABLE memories_recall RENAME TO memories_recall_new",
    "CREATE VIRTUAL TABLE memories_recall USING fts5("
    "body, mkey, memory_id UNINDEXED, seq UNINDEXED, turn UNINDEXED, role UNINDEXED, created_at UNINDEXED, "
    "tokenize = 'porter unicode61 remove_diacritics 2')",
    f"INSERT INTO memories_recall (rowid, {SQLITE_COLUMNS}) "
    "SELECT rowid, body, substr(mkey, 1, instr(mkey, ' ') - 1), memory_id, seq, turn, role, created_at "
    "FROM memories_recall_new",
    "DROP TABLE memories_recall_new",
]
POSTGRES_FORWARD = [
    "ALTER TABLE memories_recall ADD COLUMN thread varchar(200) NOT NULL DEFAULT 'default'",
    "UPDATE memories_recall r SET thread = e.thread FROM memories_entry e "
    "WHERE e.id = r.entry_id AND e.thread <> 'default'",
    "CREATE INDEX memories_recall_thread ON memories_recall (memory_id, thread, seq)",
]
POSTGRES_BACKWARD = [
    "DROP INDEX IF EXISTS memories_recall_thread",
    "ALTER TABLE memories_recall DROP COLUMN thread",
]


def _run(statements: dict):
    def run(apps, schema_editor):
        for statement in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0013_outbox_parked"),
    ]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": POSTGRES_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": POSTGRES_BACKWARD}),
        ),
    ]
