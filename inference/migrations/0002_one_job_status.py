# Every job speaks one status vocabulary (jobs.models.Status): queued, running, succeeded,
# failed, cancelled. Rows written in the old words are renamed.

from django.db import migrations, models

OLD_TO_NEW = {"finished": "succeeded"}


def rename(apps, schema_editor, mapping=OLD_TO_NEW):
    rows = apps.get_model("inference", "ModelRun").objects
    for old, new in mapping.items():
        rows.filter(status=old).update(status=new)


def rename_back(apps, schema_editor):
    rename(apps, schema_editor, {new: old for old, new in OLD_TO_NEW.items()})


class Migration(migrations.Migration):
    dependencies = [
        ("inference", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(rename, rename_back),
        migrations.AlterField(
            model_name="modelrun",
            name="started_at",
            field=models.DateTimeField(blank=True, help_text="When a worker took the job.", null=True),
        ),
        migrations.AlterField(
            model_name="modelrun",
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
