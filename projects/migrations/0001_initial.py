# Projects, keys, usage counters, rate windows and the secret store move here from `memories`
# and `chat`. State only: the tables keep their names (Meta.db_table), so an existing database
# changes nothing; on a fresh database the `memories` and `chat` migrations create them first.

import django.db.models.deletion
import projects.models
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("memories", "0004_merge"),
        ("chat", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    state_operations = [
        migrations.CreateModel(
            name="Project",
            fields=[
                (
                    "id",
                    models.CharField(
                        default=projects.models.project_id,
                        editable=False,
                        max_length=40,
                        primary_key=True,
                        serialize=False,
                    ),
                ),
                ("name", models.CharField(max_length=200)),
                ("rate_limit_per_minute", models.PositiveIntegerField(blank=True, null=True)),
                ("allowance_requests_per_month", models.PositiveIntegerField(blank=True, null=True)),
                ("allowance_memories", models.PositiveIntegerField(blank=True, null=True)),
                ("retention_days", models.PositiveIntegerField(blank=True, null=True)),
                ("model_config", models.JSONField(blank=True, null=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "members",
                    models.ManyToManyField(
                        blank=True, related_name="threadless_projects", to=settings.AUTH_USER_MODEL
                    ),
                ),
            ],
            options={"db_table": "memories_project"},
        ),
        migrations.CreateModel(
            name="RateCounter",
            fields=[
                ("bucket", models.CharField(max_length=80, primary_key=True, serialize=False)),
                ("count", models.PositiveIntegerField(default=0)),
                ("expires_at", models.DateTimeField(db_index=True)),
            ],
            options={"db_table": "memories_ratecounter"},
        ),
        migrations.CreateModel(
            name="ApiKey",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[("project", "Project"), ("publishable", "Publishable")],
                        default="project",
                        max_length=16,
                    ),
                ),
                ("agent_id", models.CharField(blank=True, default="", max_length=40)),
                ("name", models.CharField(blank=True, default="", max_length=200)),
                ("prefix", models.CharField(max_length=40)),
                ("lookup", models.CharField(max_length=16, unique=True)),
                ("hashed", models.CharField(max_length=64)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("last_used_at", models.DateTimeField(blank=True, null=True)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="keys",
                        to="projects.project",
                    ),
                ),
            ],
            options={"db_table": "memories_apikey"},
        ),
        migrations.CreateModel(
            name="ApiCall",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("day", models.DateField()),
                ("operation", models.CharField(max_length=32)),
                ("count", models.PositiveBigIntegerField(default=0)),
                (
                    "project",
                    models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, to="projects.project"),
                ),
            ],
            options={
                "db_table": "memories_apicall",
                "constraints": [
                    models.UniqueConstraint(fields=("project", "day", "operation"), name="apicall_unique")
                ],
            },
        ),
        migrations.CreateModel(
            name="ProjectUsage",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("period", models.CharField(max_length=7)),
                ("requests", models.PositiveBigIntegerField(default=0)),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="usage",
                        to="projects.project",
                    ),
                ),
            ],
            options={
                "db_table": "memories_projectusage",
                "constraints": [
                    models.UniqueConstraint(fields=("project", "period"), name="usage_project_period")
                ],
            },
        ),
        migrations.CreateModel(
            name="Secret",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=100)),
                ("ciphertext", models.TextField()),
                ("hint", models.CharField(blank=True, default="", max_length=16)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("updated_at", models.DateTimeField(auto_now=True)),
                (
                    "project",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="secrets",
                        to="projects.project",
                    ),
                ),
            ],
            options={
                "db_table": "chat_secret",
                "constraints": [
                    models.UniqueConstraint(fields=("project", "name"), name="secret_project_name")
                ],
            },
        ),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=state_operations, database_operations=[]),
    ]
