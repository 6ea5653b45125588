# Upstream settings point at `projects.Project` (same table, memories_project). State only.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("proxy", "0001_initial"),
        ("projects", "0001_initial"),
    ]

    state_operations = [
        migrations.AlterField(
            model_name="upstreamsetting",
            name="project",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="proxy_upstreams",
                to="projects.project",
            ),
        ),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=state_operations, database_operations=[]),
    ]
