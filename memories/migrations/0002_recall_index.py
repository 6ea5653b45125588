# Background memory: recall index, fact tombstones, project model config, processing mark.

import django.db.models.deletion
from django.db import migrations, models

# The recall index (memories/recall.py): one table, created per database vendor.
SQLITE_CREATE = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS memories_recall USING fts5("
    "body, mkey, memory_id UNINDEXED, seq UNINDEXED, turn UNINDEXED, role UNINDEXED, created_at UNINDEXED, "
    "tokenize = 'porter unicode61 remove_diacritics 2')"
)
POSTGRES_CREATE = [
    "CREATE TABLE IF NOT EXISTS memories_recall ("
    " entry_id bigint PRIMARY KEY, memory_id varchar(40) NOT NULL, seq bigint NOT NULL, turn integer NOT NULL,"
    " role varchar(16) NOT NULL, created_at timestamptz NOT NULL, body text NOT NULL,"
    " tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED)",
    "CREATE INDEX IF NOT EXISTS memories_recall_tsv ON memories_recall USING GIN (tsv)",
    "CREATE INDEX IF NOT EXISTS memories_recall_memory ON memories_recall (memory_id, seq)",
]


def create_recall_index(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        schema_editor.execute(SQLITE_CREATE)
    elif vendor == "postgresql":
        for statement in POSTGRES_CREATE:
            schema_editor.execute(statement)


def drop_recall_index(apps, schema_editor):
    schema_editor.execute("DROP TABLE IF EXISTS memories_recall")


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(create_recall_index, drop_recall_index),
        migrations.AddField(
            model_name="memory",
            name="background_upto_seq",
            field=models.PositiveBigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="project",
            name="model_config",
            field=models.JSONField(blank=True, null=True),
        ),
        migrations.CreateModel(
            name="FactTombstone",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("normalized", models.CharField(max_length=500)),
                ("slot", models.CharField(blank=True, default="", max_length=100)),
                ("upto_seq", models.PositiveBigIntegerField(default=0)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "memory",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="fact_tombstones",
                        to="memories.memory",
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["memory", "normalized"], name="fact_tombstone_idx")],
            },
        ),
    ]
