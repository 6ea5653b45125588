# Project, ApiKey, ProjectUsage, RateCounter and ApiCall move to `projects` with their tables
# (memories_project, …). State only: memories' foreign keys now name `projects.Project`, and
# the database keeps every table, column and constraint as it was.

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0004_merge"),
        ("projects", "0001_initial"),
        ("chat", "0002_secret_moves_to_projects"),
        ("proxy", "0002_project_moves_to_projects"),
    ]

    state_operations = [
        migrations.AlterField(
            model_name="memory",
            name="project",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="memories", to="projects.project"
            ),
        ),
        migrations.AlterField(
            model_name="errordigest",
            name="project",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="digests", to="projects.project"
            ),
        ),
        migrations.AlterField(
            model_name="idempotencyrecord",
            name="project",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to="projects.project"),
        ),
        migrations.DeleteModel(name="ApiCall"),
        migrations.DeleteModel(name="ApiKey"),
        migrations.DeleteModel(name="ProjectUsage"),
        migrations.DeleteModel(name="RateCounter"),
        migrations.DeleteModel(name="Project"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=state_operations, database_operations=[]),
    ]
