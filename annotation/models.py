"""Annotation: projects, a work queue of tasks with leases, and what annotators and reviewers write.

A researcher's Project puts a dataset's items (for STE-VQA: images) in a queue for a set of
annotators. Each item is a Task that wants one annotation, or two for the overlap share (the
second blind: a second opinion). An Assignment is one person's hold on one round of one task: it
is *leased* until `lease_expires_at` (renewed by the page's heartbeat and by every draft save),
*submitted*, *returned* to its annotator by a reviewer, *skipped* with a reason, or *expired*
when nobody renewed it. The database itself refuses a second live assignment for the same round
of a task, or two live assignments of one person on one task (partial unique constraints), so no
item is handed to more people than the overlap asks, whatever the database (annotation/queue.py).

What an annotator writes is a list of QAPairs on their assignment; every change to a pair (the
annotator's resubmission, a reviewer's fix) is a new QARevision, so the history and the diff are
kept. Drafts live on the assignment with a version: a save names the version it was based on and
a stale one is refused.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from accounts.inputs import one_line, valid_text
from benchmarks.models import Dataset, Item


class Project(models.Model):
    class Kind(models.TextChoices):
        AUTHORING = "authoring", _("Authoring")
        VALIDATION = "validation", _("Validation")

    name = models.CharField(max_length=200, validators=[one_line])
    kind = models.CharField(
        max_length=16,
        choices=Kind.choices,
        default=Kind.AUTHORING,
        help_text=_(
            "Authoring: annotators write; validation: the queue of a validation plan (validation app)."
        ),
    )
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="annotation_projects")
    instructions = models.TextField(
        blank=True, default="", validators=[valid_text], help_text=_("Shown to annotators on every task.")
    )
    pairs_per_item = models.PositiveSmallIntegerField(
        default=3, help_text=_("Question-answer pairs wanted per image.")
    )
    overlap = models.FloatField(
        default=0.2, help_text=_("Share of images (0 to 1) that a second annotator answers blind.")
    )
    lease_seconds = models.PositiveIntegerField(
        default=600, help_text=_("How long a task stays held without a sign of life from its page.")
    )
    seed = models.IntegerField(default=0, help_text=_("Chooses the images that get a second opinion."))
    annotators = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="annotation_projects", blank=True
    )
    reviewers = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="review_projects", blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    published = models.ForeignKey(
        Dataset,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text=_("The dataset made from the accepted annotations, the latest time it was published."),
    )

    class Meta:
        ordering = ["-created_at"]
        permissions = [("view_progress", "Can view annotation projects' progress and statistics")]

    def __str__(self) -> str:
        return self.name


class Task(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="tasks")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()
    opinions = models.PositiveSmallIntegerField(
        default=1, help_text=_("How many annotators answer this item: 1, or 2 for a second opinion.")
    )
    # Where the queue looks for work (annotation/queue.py keeps both up to date): the round the
    # next claim takes, and whether it can be taken now. The constraints on Assignment, not
    # these, are what guarantee that no round is held twice.
    next_round = models.PositiveSmallIntegerField(default=1)
    available = models.BooleanField(default=True)

    class Meta:
        ordering = ["project", "position"]
        constraints = [models.UniqueConstraint(fields=["project", "item"], name="task_unique_item")]
        indexes = [
            models.Index(
                fields=["project", "-next_round", "position"],
                condition=Q(available=True),
                name="task_available",
            )
        ]

    def __str__(self) -> str:
        return f"task {self.position} of {self.project}"


class Assignment(models.Model):
    class Status(models.TextChoices):
        LEASED = "leased", _("In progress")
        SUBMITTED = "submitted", _("Submitted")
        RETURNED = "returned", _("Returned by a reviewer")
        SKIPPED = "skipped", _("Skipped")
        EXPIRED = "expired", _("Lease expired")

    #: Statuses that hold the task's round: nobody else may take it while one of these stands.
    LIVE = (Status.LEASED, Status.SUBMITTED, Status.RETURNED)

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="assignments")
    round = models.PositiveSmallIntegerField(
        default=1, help_text=_("1: the first annotation; 2: a second opinion.")
    )
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.LEASED)
    leased_at = models.DateTimeField(help_text=_("When the server handed the task out (its clock)."))
    lease_expires_at = models.DateTimeField()
    submitted_at = models.DateTimeField(null=True, blank=True)
    work_seconds = models.FloatField(
        default=0, help_text=_("Server-clock seconds between handing out and each submit, summed.")
    )
    version = models.PositiveIntegerField(default=0, help_text=_("Bumped by every saved draft and submit."))
    draft = models.JSONField(default=dict, blank=True)
    skip_reason = models.TextField(blank=True, default="")
    return_reason = models.TextField(blank=True, default="", help_text=_("Why a reviewer sent it back."))

    class Meta:
        ordering = ["task__position", "round"]
        constraints = [
            models.UniqueConstraint(
                fields=["task", "round"],
                condition=Q(status__in=["leased", "submitted", "returned"]),
                name="assignment_one_live_per_round",
            ),
            models.UniqueConstraint(
                fields=["task", "annotator"],
                condition=Q(status__in=["leased", "submitted", "returned"]),
                name="assignment_one_live_per_person",
            ),
        ]
        indexes = [
            models.Index(fields=["annotator", "status"], name="assignment_annotator_status"),
            models.Index(fields=["status", "lease_expires_at"], name="assignment_lease"),
        ]

    def __str__(self) -> str:
        return f"{self.annotator} on {self.task} (round {self.round}, {self.status})"


class QAPair(models.Model):
    class Review(models.TextChoices):
        PENDING = "pending", _("Waiting for review")
        ACCEPTED = "accepted", _("Accepted")
        FIXED = "fixed", _("Fixed by a reviewer")
        REJECTED = "rejected", _("Rejected")

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="pairs")
    index = models.PositiveSmallIntegerField()
    source = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="second_opinions",
        help_text=_("For a second opinion: the first annotator's pair whose question it answers."),
    )
    question = models.TextField()
    answer = models.TextField()
    evidence = models.JSONField(help_text=_("Eight numbers x1, y1, ..., x4, y4 in image pixels."))
    language = models.CharField(max_length=4, help_text=_("en or ch, by the released evaluator's rule."))
    ocr_text = models.TextField(
        blank=True, default="", help_text=_("What OCR read inside the quadrilateral.")
    )
    ocr_similarity = models.FloatField(null=True, blank=True)
    ocr_confirmed = models.BooleanField(
        default=False, help_text=_("The annotator confirmed an answer that OCR read differently.")
    )
    version = models.PositiveIntegerField(default=1)
    review = models.CharField(max_length=16, choices=Review.choices, default=Review.PENDING)
    review_reason = models.TextField(blank=True, default="")
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["assignment", "index"]
        constraints = [models.UniqueConstraint(fields=["assignment", "index"], name="qapair_unique_index")]

    def __str__(self) -> str:
        return f"{self.question} → {self.answer}"

    def content(self) -> dict:
        return {"question": self.question, "answer": self.answer, "evidence": list(self.evidence)}


class QARevision(models.Model):
    """One version of a pair: what it said and who made it so (the annotator, or a reviewer's fix)."""

    class Kind(models.TextChoices):
        WRITTEN = "written", _("Written by the annotator")
        FIXED = "fixed", _("Fixed by a reviewer")

    pair = models.ForeignKey(QAPair, on_delete=models.CASCADE, related_name="revisions")
    version = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, choices=Kind.choices)
    question = models.TextField()
    answer = models.TextField()
    evidence = models.JSONField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pair", "version"]
        constraints = [models.UniqueConstraint(fields=["pair", "version"], name="qarevision_unique_version")]

    def __str__(self) -> str:
        return f"version {self.version} of pair {self.pair_id} ({self.kind})"
