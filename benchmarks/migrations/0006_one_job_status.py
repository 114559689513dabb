# Every job speaks one status vocabulary (jobs.models.Status): queued, running, succeeded,
# failed, cancelled. Rows written in the old words are renamed.

from django.db import migrations, models

OLD_TO_NEW = {"pending": "queued"}


def rename(apps, schema_editor, mapping=OLD_TO_NEW):
    rows = apps.get_model("benchmarks", "ImportJob").objects
    for old, new in mapping.items():
        rows.filter(status=old).update(status=new)


def rename_back(apps, schema_editor):
    rename(apps, schema_editor, {new: old for old, new in OLD_TO_NEW.items()})


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0005_names_on_one_line"),
    ]

    operations = [
        migrations.RunPython(rename, rename_back),
        migrations.AlterField(
            model_name="importjob",
            name="status",
            field=models.CharField(
                choices=[
                    ("queued", "Waiting for a worker"),
                    ("running", "Running"),
                    ("succeeded", "Succeeded"),
                    ("failed", "Failed"),
                    ("cancelled", "Cancelled"),
                ],
                default="queued",
                max_length=16,
            ),
        ),
    ]
