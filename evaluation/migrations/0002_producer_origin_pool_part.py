"""Submissions say who answered (`producer`, was `kind`) and how the answers arrived (`origin`);
a test plan's testers are members of its pooled submission (`pool`, was parameters["pooled_from"]);
predictions name the scoring unit of their item (`part`, was answer["question_index"])."""

import django.db.models.deletion
from django.db import migrations, models


def explicit_origins(apps, schema_editor):
    Submission = apps.get_model("evaluation", "Submission")
    Prediction = apps.get_model("evaluation", "Prediction")
    for submission in Submission.objects.filter(producer="human"):
        parameters = submission.parameters or {}
        if "pooled_from" in parameters:
            submission.origin = "test_plan"
            Submission.objects.filter(pk__in=parameters.pop("pooled_from")).update(pool=submission)
        elif "tester" in parameters and "plan" in parameters:
            submission.origin = "test_session"
        submission.parameters = parameters
        submission.save(update_fields=["origin", "parameters"])
    for prediction in Prediction.objects.filter(answer__has_key="question_index"):
        prediction.part = prediction.answer.pop("question_index")
        prediction.save(update_fields=["part", "answer"])


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0002_benchmark_names_unit_count"),
        ("evaluation", "0001_initial"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="submission",
            options={
                "ordering": ["dataset", "producer", "name", "setting"],
                "permissions": [("view_report", "Can view evaluation reports")],
            },
        ),
        migrations.RemoveConstraint(
            model_name="prediction",
            name="prediction_one_per_item",
        ),
        migrations.RenameField(
            model_name="submission",
            old_name="kind",
            new_name="producer",
        ),
        migrations.AddField(
            model_name="prediction",
            name="part",
            field=models.PositiveIntegerField(
                default=0,
                help_text="Which scoring unit of the item (a question of an image that holds several); 0 otherwise.",
            ),
        ),
        migrations.AddField(
            model_name="submission",
            name="origin",
            field=models.CharField(
                choices=[
                    ("upload", "Uploaded prediction file"),
                    ("model_run", "Model run"),
                    ("test_plan", "Test plan (its testers pooled)"),
                    ("test_session", "One tester's test session"),
                    ("annotation", "Annotators"),
                ],
                default="upload",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="submission",
            name="pool",
            field=models.ForeignKey(
                blank=True,
                help_text="The pooled submission whose row this one's answers also count in (a test plan's Human row).",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="members",
                to="evaluation.submission",
            ),
        ),
        migrations.AlterField(
            model_name="prediction",
            name="score",
            field=models.JSONField(blank=True, default=dict, help_text="The metric's per-unit values."),
        ),
        migrations.AlterField(
            model_name="submission",
            name="setting",
            field=models.CharField(
                blank=True,
                default="",
                help_text="One of the benchmark's settings, as its spec declares them.",
                max_length=32,
            ),
        ),
        migrations.AlterField(
            model_name="submission",
            name="source",
            field=models.CharField(
                blank=True, default="", help_text="A file name, or what made it.", max_length=500
            ),
        ),
        migrations.RunPython(explicit_origins, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="prediction",
            constraint=models.UniqueConstraint(
                fields=("submission", "item", "part"), name="prediction_one_per_unit"
            ),
        ),
    ]
