# The entry and outbox tables' single-column memory_id indexes (the foreign keys' own, plus
# PostgreSQL's varchar_pattern_ops twin) are covered by the composite indexes that start with
# memory_id: (memory, seq) on entries, (memory, processed_at) on the outbox. Every insert paid
# for them. The state says db_index=False; the database drops whatever single-column memory_id
# index it has, found by introspection (the generated names are the schema editor's business).

import django.db.models.deletion
from django.db import migrations, models

TABLES = (("entry", "memories_entry"), ("outbox", "memories_outbox"))


def _single_column_indexes(schema_editor, table: str) -> list[str]:
    with schema_editor.connection.cursor() as cursor:
        found = schema_editor.connection.introspection.get_constraints(cursor, table)
    return [
        name
        for name, c in found.items()
        if c["columns"] == ["memory_id"] and c["index"] and not c["unique"] and not c["primary_key"]
    ]


def drop(apps, schema_editor):
    for model_name, table in TABLES:
        model = apps.get_model("memories", model_name)
        for name in _single_column_indexes(schema_editor, table):
            schema_editor.execute(schema_editor._delete_index_sql(model, name))


def create(apps, schema_editor):
    """Back: one plain memory_id index per table (PostgreSQL's pattern-ops twin served no query)."""
    for model_name, table in TABLES:
        model = apps.get_model("memories", model_name)
        if not _single_column_indexes(schema_editor, table):
            schema_editor.execute(
                schema_editor._create_index_sql(model, fields=[model._meta.get_field("memory")])
            )


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0005_project_models_move_to_projects"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="entry",
                    name="memory",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="entries",
                        to="memories.memory",
                    ),
                ),
                migrations.AlterField(
                    model_name="outbox",
                    name="memory",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="outbox",
                        to="memories.memory",
                    ),
                ),
            ],
            database_operations=[migrations.RunPython(drop, create)],
        ),
    ]
