# What a stored turn costs PostgreSQL (issue 17 round 6, docs/benchmarks.md):
# * Memory.turn_start_seq: the first seq of the memory's newest turn, kept by whatever opens a turn,
#   so report's write returns it from the memory row instead of reading the turn's entries (that
#   subquery was ~0.1 ms of PostgreSQL's CPU per report). Filled here from the entries.
# * Indexes no query needs: Turn's memory_id index (the unique (memory, number) one starts with it)
#   and Memory's project_id index (memory_list_idx starts with it), each with PostgreSQL's
#   varchar_pattern_ops twin, and the pattern-ops twin of Memory's primary key (no LIKE on ids). Every
#   Turn insert paid for two of them, and every statement on these tables opens and locks them all.
#   As in 0006, the state says db_index=False and the database drops what it has, found by
#   introspection (the generated names are the schema editor's business).

import django.db.models.deletion
from django.db import migrations, models

# (model, table, column, field or None): plain indexes on exactly that column go; `field` is
# what migrating back indexes again (None: the primary key's pattern-ops twin, PostgreSQL only).
SINGLE_COLUMN = (
    ("memory", "memories_memory", "project_id", "project"),
    ("turn", "memories_turn", "memory_id", "memory"),
    ("memory", "memories_memory", "id", None),
)


def _single_column_indexes(schema_editor, table: str, column: str) -> list[str]:
    with schema_editor.connection.cursor() as cursor:
        found = schema_editor.connection.introspection.get_constraints(cursor, table)
    return [
        name
        for name, c in found.items()
        if c["columns"] == [column] and c["index"] and not c["unique"] and not c["primary_key"]
    ]


def drop(apps, schema_editor):
    for model_name, table, column, _field in SINGLE_COLUMN:
        model = apps.get_model("memories", model_name)
        for name in _single_column_indexes(schema_editor, table, column):
            schema_editor.execute(schema_editor._delete_index_sql(model, name))


def create(apps, schema_editor):
    """Back: the indexes as Django made them (a plain one per foreign key and, on PostgreSQL, the
    pattern-ops twins)."""
    postgres = schema_editor.connection.vendor == "postgresql"
    for model_name, table, column, field_name in SINGLE_COLUMN:
        if _single_column_indexes(schema_editor, table, column):
            continue
        model = apps.get_model("memories", model_name)
        field = model._meta.get_field(field_name or "id")
        if field_name is not None:
            schema_editor.execute(schema_editor._create_index_sql(model, fields=[field]))
        if postgres:
            like = schema_editor._create_like_index_sql(model, field)
            if like is not None:
                schema_editor.execute(like)


FILL_TURN_START = (
    "UPDATE memories_memory SET turn_start_seq = COALESCE((SELECT MIN(e.seq) FROM memories_entry e "
    "WHERE e.memory_id = memories_memory.id AND e.turn = memories_memory.last_turn), 0) WHERE last_turn > 0"
)


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0007_entry_failure_and_data_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="memory",
            name="turn_start_seq",
            field=models.PositiveBigIntegerField(default=0),
        ),
        migrations.RunSQL(FILL_TURN_START, migrations.RunSQL.noop),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="memory",
                    name="project",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="memories",
                        to="projects.project",
                    ),
                ),
                migrations.AlterField(
                    model_name="turn",
                    name="memory",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="turns",
                        to="memories.memory",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(drop, create)],
        ),
    ]
