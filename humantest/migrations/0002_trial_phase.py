"""Trials are practice or test by their `phase` (was `kind`, a word that meant three things)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("benchmarks", "0002_benchmark_names_unit_count"),
        ("humantest", "0001_initial"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="trial",
            options={"ordering": ["session", "phase", "round", "position"]},
        ),
        migrations.RemoveConstraint(
            model_name="trial",
            name="one_trial_per_slot",
        ),
        migrations.RemoveIndex(
            model_name="trial",
            name="trial_session_status",
        ),
        migrations.RenameField(
            model_name="trial",
            old_name="kind",
            new_name="phase",
        ),
        migrations.AddIndex(
            model_name="trial",
            index=models.Index(fields=["session", "phase", "status"], name="trial_session_status"),
        ),
        migrations.AddConstraint(
            model_name="trial",
            constraint=models.UniqueConstraint(
                fields=("session", "phase", "round", "position"), name="one_trial_per_slot"
            ),
        ),
        migrations.AlterField(
            model_name="testplan",
            name="setting",
            field=models.CharField(
                blank=True,
                default="",
                help_text="One of the benchmark's settings; empty when it has none.",
                max_length=16,
            ),
        ),
        migrations.AlterField(
            model_name="trial",
            name="part",
            field=models.PositiveIntegerField(
                default=0, help_text="Which question of the item (when an item holds several)."
            ),
        ),
    ]
