from array import array

from django.db import migrations, models


def _codes(blob: bytes, dim: int) -> bytes:
    """memories.embeddings.codes_of for a stored row: each vector's sign bits, little-endian words."""
    values = array("f")
    values.frombytes(bytes(blob))
    width = (dim + 63) // 64 * 8
    out = b""
    for start in range(0, len(values), dim):
        bits = 0
        for i, x in enumerate(values[start : start + dim]):
            if x > 0:
                bits |= 1 << i
        out += bits.to_bytes(width, "little")
    return out


def fill_codes(apps, schema_editor):
    RecallVector = apps.get_model("memories", "RecallVector")
    batch = []
    for row in RecallVector.objects.only("entry_id", "dim", "vector").iterator(chunk_size=500):
        if row.dim:
            row.codes = _codes(row.vector, row.dim)
            batch.append(row)
        if len(batch) >= 500:
            RecallVector.objects.bulk_update(batch, ["codes"])
            batch = []
    if batch:
        RecallVector.objects.bulk_update(batch, ["codes"])


class Migration(migrations.Migration):
    dependencies = [
        ("memories", "0009_memory_files"),
    ]

    operations = [
        migrations.AddField(
            model_name="recallvector",
            name="codes",
            field=models.BinaryField(default=b""),
        ),
        migrations.RunPython(fill_codes, migrations.RunPython.noop),
    ]
