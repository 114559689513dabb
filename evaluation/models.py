"""Submissions and their predictions: one shape for every answer, human or model.

A Submission is everything one producer answered on one dataset under one setting: a model
run, a tester's session, an annotator's second opinion. Its Predictions are per item. Scoring
fills each prediction's `score` (the metric's per-item row) and the submission's `summary`,
and records how: the setting, the metric variant and its parameters, the metric version.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from benchmarks.models import Dataset, Item


class Submission(models.Model):
    class Kind(models.TextChoices):
        MODEL = "model", "Model"
        HUMAN = "human", "Human"
        ANNOTATOR = "annotator", "Annotator"

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="submissions")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.MODEL)
    name = models.CharField(
        max_length=200, help_text='The row label in reports: a model\'s name, or "Human".'
    )
    setting = models.CharField(
        max_length=32, blank=True, default="", help_text="TRANCE: basic, event or view; STE-VQA: mono or bi."
    )
    variant = models.CharField(
        max_length=32, blank=True, default="", help_text="Metric variant, e.g. official."
    )
    source = models.CharField(max_length=500, blank=True, default="")
    parameters = models.JSONField(
        default=dict, blank=True, help_text="Metric parameters used for the summary."
    )
    summary = models.JSONField(default=dict, blank=True)
    problems = models.JSONField(
        default=list, blank=True, help_text="Missing or extra ids found while scoring."
    )
    scored_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dataset", "kind", "name", "setting"]
        permissions = [("view_report", "Can view evaluation reports")]

    def __str__(self) -> str:
        setting = f" ({self.setting})" if self.setting else ""
        return f"{self.name}{setting} on {self.dataset}"


class Prediction(models.Model):
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="predictions")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    answer = models.JSONField(
        null=True, help_text="The answer in the benchmark's prediction format; null when none was given."
    )
    score = models.JSONField(default=dict, blank=True, help_text="The metric's per-item values.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["submission", "item"], name="prediction_one_per_item")]

    def __str__(self) -> str:
        return f"prediction for item {self.item_id}"
