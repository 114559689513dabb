"""Uploads wait outside the media folder (never served) and jobs record when a worker took them."""

import shutil
from pathlib import Path

from django.conf import settings
from django.db import migrations, models

import benchmarks.storage


def move_uploads_out_of_media(apps, schema_editor):
    """Uploads of jobs still waiting move to UPLOADS_ROOT (same names); those of ended jobs, which
    the media folder served to anyone signed in, are removed."""
    ImportJob = apps.get_model("benchmarks", "ImportJob")
    old = Path(settings.MEDIA_ROOT) / "imports"
    new = Path(settings.UPLOADS_ROOT) / "imports"
    if old.is_dir():
        new.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(old, new, dirs_exist_ok=True)
        shutil.rmtree(old)
    for job in ImportJob.objects.filter(status__in=("succeeded", "failed")):
        for field in ("upload", "scenes_upload", "images_upload"):
            name = getattr(job, field).name
            if name:
                (Path(settings.UPLOADS_ROOT) / name).unlink(missing_ok=True)
        ImportJob.objects.filter(pk=job.pk).update(upload="", scenes_upload="", images_upload="")


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0002_benchmark_names_unit_count"),
    ]

    operations = [
        migrations.AddField(
            model_name="importjob",
            name="started_at",
            field=models.DateTimeField(blank=True, help_text="When a worker took the job.", null=True),
        ),
        migrations.AlterField(
            model_name="importjob",
            name="images_upload",
            field=models.FileField(
                blank=True,
                help_text="A zip of the images.",
                storage=benchmarks.storage.UploadStorage(),
                upload_to="imports/%Y/%m/",
            ),
        ),
        migrations.AlterField(
            model_name="importjob",
            name="scenes_upload",
            field=models.FileField(
                blank=True, storage=benchmarks.storage.UploadStorage(), upload_to="imports/%Y/%m/"
            ),
        ),
        migrations.AlterField(
            model_name="importjob",
            name="upload",
            field=models.FileField(storage=benchmarks.storage.UploadStorage(), upload_to="imports/%Y/%m/"),
        ),
        migrations.RunPython(move_uploads_out_of_media, migrations.RunPython.noop),
    ]
