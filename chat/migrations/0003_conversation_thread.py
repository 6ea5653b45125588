# A conversation is its memory's default thread (a memory of its own, as before) or a named thread
# of its subject's memory: `thread` column, and the memory no longer one-to-one.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0002_secret_moves_to_projects"),
    ]

    operations = [
        migrations.AddField(
            model_name="conversation",
            name="thread",
            field=models.CharField(default="default", max_length=200),
        ),
        migrations.AlterField(
            model_name="conversation",
            name="memory",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="conversations",
                to="memories.memory",
            ),
        ),
        migrations.AddConstraint(
            model_name="conversation",
            constraint=models.UniqueConstraint(
                fields=("memory", "thread"), name="conversation_memory_thread"
            ),
        ),
    ]
