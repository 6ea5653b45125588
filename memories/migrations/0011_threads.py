"""Threads: one memory, many conversations (SPEC 4.10), and facts' validity times (4.11).

Every existing entry, turn and digest reads as the `default` thread (the new columns' database
default, so no row is rewritten on PostgreSQL), and the memory row keeps holding that thread's
turn counters and summary: an existing memory is one `default` thread with nothing moved.
decorate's indexes lead with (memory, thread) so a thread's window stays one range read."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0010_recall_vector_codes"),
    ]

    operations = [
        migrations.CreateModel(
            name="Thread",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=200)),
                ("last_turn", models.PositiveIntegerField(default=0)),
                ("turn_start_seq", models.PositiveBigIntegerField(default=0)),
                ("summary", models.TextField(blank=True, default="")),
                ("summary_upto_seq", models.PositiveBigIntegerField(default=0)),
                ("last_budget_tokens", models.PositiveIntegerField(default=60000)),
                ("message_count", models.PositiveIntegerField(default=0)),
                ("token_count", models.PositiveBigIntegerField(default=0)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("updated_at", models.DateTimeField(default=django.utils.timezone.now)),
            ],
        ),
        migrations.RemoveConstraint(
            model_name="turn",
            name="turn_memory_number",
        ),
        migrations.RemoveIndex(
            model_name="entry",
            name="entry_window_idx",
        ),
        migrations.RemoveIndex(
            model_name="entry",
            name="entry_turn_idx",
        ),
        migrations.RemoveIndex(
            model_name="entry",
            name="entry_failure_idx",
        ),
        migrations.AddField(
            model_name="entry",
            name="thread",
            field=models.CharField(db_default="default", default="default", max_length=200),
        ),
        migrations.AddField(
            model_name="errordigest",
            name="thread",
            field=models.CharField(db_default="default", default="default", max_length=200),
        ),
        migrations.AddField(
            model_name="fact",
            name="valid_from",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="fact",
            name="valid_to",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="memory",
            name="threads_message_count",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="memory",
            name="threads_token_count",
            field=models.PositiveBigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="turn",
            name="thread",
            field=models.CharField(db_default="default", default="default", max_length=200),
        ),
        migrations.AddIndex(
            model_name="entry",
            index=models.Index(
                condition=models.Q(("committed", True), ("kind", "message")),
                fields=["memory", "thread", "-seq"],
                name="entry_window_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="entry",
            index=models.Index(
                condition=models.Q(("committed", True), ("kind__in", ("digest", "error"))),
                fields=["memory", "thread", "turn"],
                name="entry_failure_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="entry",
            index=models.Index(fields=["memory", "thread", "turn", "seq"], name="entry_turn_idx"),
        ),
        migrations.AddConstraint(
            model_name="turn",
            constraint=models.UniqueConstraint(
                fields=("memory", "thread", "number"), name="turn_memory_thread_number"
            ),
        ),
        migrations.AddField(
            model_name="thread",
            name="memory",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="threads",
                to="memories.memory",
            ),
        ),
        migrations.AddIndex(
            model_name="thread",
            index=models.Index(fields=["memory", "-updated_at", "-name"], name="thread_activity_idx"),
        ),
        migrations.AddConstraint(
            model_name="thread",
            constraint=models.UniqueConstraint(fields=("memory", "name"), name="thread_memory_name"),
        ),
    ]
