"""Benchmark names are the specs' (no fixed choices: a new benchmark needs no migration), and
datasets count their scoring units. STE-VQA training-layout items get the question ids an
import now gives (their QA pairs numbered in file order)."""

from django.db import migrations, models


def count_units(apps, schema_editor):
    Dataset = apps.get_model("benchmarks", "Dataset")
    Item = apps.get_model("benchmarks", "Item")
    Dataset.objects.update(unit_count=models.F("item_count"))
    for dataset in Dataset.objects.filter(benchmark="stevqa"):
        if dataset.meta.get("layout") != "train":
            continue
        next_id = 0
        items = list(Item.objects.filter(dataset=dataset).order_by("position"))
        for item in items:
            count = len(item.payload.get("questions") or [])
            item.payload["question_ids"] = list(range(next_id, next_id + count))
            next_id += count
        Item.objects.bulk_update(items, ["payload"], batch_size=1000)
        Dataset.objects.filter(pk=dataset.pk).update(unit_count=next_id)


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="dataset",
            name="unit_count",
            field=models.PositiveIntegerField(
                default=0,
                editable=False,
                help_text="Scoring units: items, or their questions where an item holds several.",
            ),
        ),
        migrations.AlterField(
            model_name="dataset",
            name="benchmark",
            field=models.CharField(help_text="The benchmark's name, as its spec declares it.", max_length=32),
        ),
        migrations.AlterField(
            model_name="importjob",
            name="benchmark",
            field=models.CharField(max_length=32),
        ),
        migrations.RunPython(count_units, migrations.RunPython.noop),
    ]
