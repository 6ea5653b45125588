# entry_kind_turn_idx (memory, kind, turn) held every entry, so every message insert (report,
# decorate's store) paid for a b-tree only two rare kinds are looked up by. Two partial indexes
# replace it, which no message enters: the failures block's (committed digests and errors, by
# turn: decorate's `failures_in_turns`) and the pipeline's stored data (committed data entries,
# newest first: chat.tasktypes.base). The console timeline reads by turn (entry_turn_idx),
# unchanged. Migrating back recreates the old index.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0006_drop_redundant_memory_indexes"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="entry",
            index=models.Index(
                condition=models.Q(("committed", True), ("kind__in", ("digest", "error"))),
                fields=["memory", "turn"],
                name="entry_failure_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="entry",
            index=models.Index(
                condition=models.Q(("committed", True), ("kind", "data")),
                fields=["memory", "-seq"],
                name="entry_data_idx",
            ),
        ),
        migrations.RemoveIndex(
            model_name="entry",
            name="entry_kind_turn_idx",
        ),
    ]
