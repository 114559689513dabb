"""Submissions and their predictions: one shape for every answer, human or model.

A Submission is everything one producer answered on one dataset under one setting: an uploaded
prediction file, a model run, a tester's session, a test plan's testers pooled, annotators'
second opinions. Its Predictions are per scoring unit: an item, or one question of an item that
holds several (an image with several questions). Scoring fills each prediction's `score` (the metric's per-unit
row) and the submission's `summary`, and records how: the setting, the metric variant and its
parameters, the metric version. Only `evaluation.services` writes these rows.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.inputs import one_line
from benchmarks.models import Dataset, Item
from benchmarks.storage import upload_storage
from jobs.models import Job


class Submission(models.Model):
    class Producer(models.TextChoices):
        """Who gave the answers: the row's group in reports (models first, Human last)."""

        MODEL = "model", _("Model")
        HUMAN = "human", _("Human")
        ANNOTATOR = "annotator", _("Annotator")

    class Origin(models.TextChoices):
        """How the answers arrived."""

        UPLOAD = "upload", _("Uploaded prediction file")
        MODEL_RUN = "model_run", _("Model run")
        TEST_PLAN = "test_plan", _("Test plan (its testers pooled)")
        TEST_SESSION = "test_session", _("One tester's test session")
        ANNOTATION = "annotation", _("Annotators")

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="submissions")
    producer = models.CharField(max_length=16, choices=Producer.choices, default=Producer.MODEL)
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.UPLOAD)
    name = models.CharField(
        max_length=200,
        validators=[one_line],
        help_text=_('The row label in reports: a model\'s name, or "Human".'),
    )
    setting = models.CharField(
        max_length=32,
        blank=True,
        default="",
        help_text=_("One of the benchmark's settings, as its spec declares them."),
    )
    variant = models.CharField(
        max_length=32, blank=True, default="", help_text=_("Metric variant, e.g. official.")
    )
    source = models.CharField(
        max_length=500, blank=True, default="", help_text=_("A file name, or what made it.")
    )
    parameters = models.JSONField(
        default=dict, blank=True, help_text=_("Metric parameters used for the summary.")
    )
    pool = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="members",
        help_text=_(
            "The pooled submission whose row this one's answers also count in (a test plan's Human row)."
        ),
    )
    summary = models.JSONField(default=dict, blank=True)
    problems = models.JSONField(
        default=list, blank=True, help_text=_("Missing or extra ids found while scoring.")
    )
    scored_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dataset", "producer", "name", "setting"]
        permissions = [("view_report", "Can view evaluation reports")]

    def __str__(self) -> str:
        setting = f" ({self.setting})" if self.setting else ""
        return f"{self.name}{setting} on {self.dataset}"

    @property
    def setting_label(self) -> str:
        """The setting as its benchmark names it ("Event"), in the reader's language; "" for none."""
        return gettext(self.dataset.spec.setting_label(self.setting)) if self.setting else ""


class Prediction(models.Model):
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="predictions")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    part = models.PositiveIntegerField(
        default=0,
        help_text=_(
            "Which scoring unit of the item (a question of an image that holds several); 0 otherwise."
        ),
    )
    answer = models.JSONField(
        null=True, help_text=_("The answer in the benchmark's prediction format; null when none was given.")
    )
    score = models.JSONField(default=dict, blank=True, help_text=_("The metric's per-unit values."))

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["submission", "item", "part"], name="prediction_one_per_unit")
        ]

    def __str__(self) -> str:
        return f"prediction for item {self.item_id} part {self.part}"


class ScoringJob(Job):
    """A prediction file scored by a worker: an upload to a dataset with more units than a
    request scores (settings.SCORE_IN_REQUEST_UNITS). Its submission exists, unscored, from the
    upload on (the name is taken); a job that fails removes it and keeps the reasons."""

    kind = "scoring"

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="scoring_jobs")
    submission = models.ForeignKey(
        Submission, null=True, blank=True, on_delete=models.SET_NULL, related_name="scoring_jobs"
    )
    name = models.CharField(max_length=200, help_text=_("The submission's name (kept when the job fails)."))
    upload = models.FileField(upload_to="submissions/%Y/%m/", storage=upload_storage, blank=True)
    errors = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"scoring of {self.name} on dataset {self.dataset_id}"
