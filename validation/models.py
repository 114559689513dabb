"""Validation: a stratified sample of a generated dataset, checked by people, and what they said.

A researcher's Plan draws a sample from a dataset (sizes, strata, allocation and seed recorded,
so the draw can be repeated and reported) and puts the sampled items on the annotation work
queue: the plan owns an annotation Project of kind "validation", with one Task per sampled item.
Leases, heartbeats, drafts with versions (409 on a stale save) and the "no round held twice"
guarantee are the queue's (annotation/queue.py); a share of the sample wants two or three
validators (Task.opinions), each blind to the others.

A Verdict is one validator's answers on one item (the benchmark's questions: is the answer
correct, is the grounding correct, which program step is wrong...), kept with whether they make
the item an error. The estimates (validation/estimates.py) read the verdicts back per stratum.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from accounts.inputs import one_line
from annotation.models import Assignment, Project, Task
from benchmarks.models import Dataset, Item


class Plan(models.Model):
    class Allocation(models.TextChoices):
        PROPORTIONAL = "proportional", _("Proportional to the strata's sizes")
        EQUAL = "equal", _("Equal per stratum")

    name = models.CharField(max_length=200, validators=[one_line])
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="validation_plans")
    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="validation_plan")
    strata = models.JSONField(default=list, blank=True, help_text=_("The stratifiers chosen, by key."))
    allocation = models.CharField(max_length=16, choices=Allocation.choices, default=Allocation.PROPORTIONAL)
    requested_size = models.PositiveIntegerField(
        null=True, blank=True, help_text=_("A sample size asked for.")
    )
    margin = models.FloatField(
        null=True, blank=True, help_text=_("Or a target margin of error, from which the size is computed.")
    )
    confidence = models.FloatField(default=0.95)
    seed = models.IntegerField(default=0)
    overlap = models.FloatField(default=0.1, help_text=_("Share of the sample judged by several validators."))
    validators_per_overlap = models.PositiveSmallIntegerField(default=2)
    draw = models.JSONField(
        default=dict, help_text=_("The draw as made: population and sample sizes per stratum, the method.")
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        permissions = [("view_estimates", "Can view validation plans' estimates and reports")]

    def __str__(self) -> str:
        return self.name


class Sampled(models.Model):
    """One sampled item: its stratum, and the queue task that gets it judged."""

    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="sampled")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    task = models.OneToOneField(Task, on_delete=models.CASCADE, related_name="sampled")
    stratum = models.CharField(max_length=300)

    class Meta:
        ordering = ["plan", "task__position"]
        constraints = [models.UniqueConstraint(fields=["plan", "item"], name="sampled_unique_item")]
        indexes = [models.Index(fields=["plan", "stratum"], name="sampled_stratum")]

    def __str__(self) -> str:
        return f"{self.item} in {self.plan} ({self.stratum})"


class Verdict(models.Model):
    """One validator's submitted answers on one sampled item (one round of its task)."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="verdict")
    sampled = models.ForeignKey(Sampled, on_delete=models.CASCADE, related_name="verdicts")
    validator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    round = models.PositiveSmallIntegerField()
    answers = models.JSONField()
    error = models.BooleanField(help_text=_("Whether these answers make the item an error."))
    submitted_at = models.DateTimeField()

    class Meta:
        ordering = ["sampled", "round"]
        constraints = [models.UniqueConstraint(fields=["sampled", "round"], name="verdict_unique_round")]

    def __str__(self) -> str:
        return f"{self.validator} on {self.sampled.item}: {'error' if self.error else 'fine'}"
