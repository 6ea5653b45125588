# The secret store moves to `projects` (same table, chat_secret) and agents and conversations
# point at `projects.Project` (same table, memories_project). State only: nothing changes in
# the database.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0001_initial"),
        ("projects", "0001_initial"),
    ]

    state_operations = [
        migrations.AlterField(
            model_name="agent",
            name="project",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="agents", to="projects.project"
            ),
        ),
        migrations.AlterField(
            model_name="conversation",
            name="project",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="conversations",
                to="projects.project",
            ),
        ),
        migrations.DeleteModel(name="Secret"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=state_operations, database_operations=[]),
    ]
