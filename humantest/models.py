"""Human baselines: test plans, one session per invited tester, and its trials.

A researcher's TestPlan says which items of a dataset testers answer and how: the setting, how
many items each tester gets and how they are drawn, practice items, a time limit, who is invited.
A tester's TestSession holds their trials, drawn once when the session starts. The server is the
clock: a Trial's `served_at` is set the first time its page is sent and never again, so reloading
shows the same trial with the same deadline; `answered_at` is set when the answer arrives. Each
finished test trial becomes a Prediction in the session's Submission (origin "test session"),
scored by the benchmark's metric like any model's, through the evaluation engine's services.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from accounts.inputs import one_line, valid_text
from benchmarks.models import Dataset, Item
from evaluation.models import Submission


class TestPlan(models.Model):
    __test__ = False  # not a pytest test class

    class Draw(models.TextChoices):
        RANDOM = "random", "Random per tester (seeded)"
        FIXED = "fixed", "Fixed list, same for every tester"

    name = models.CharField(max_length=200, validators=[one_line])
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="test_plans")
    setting = models.CharField(
        max_length=16,
        blank=True,
        default="",
        help_text="One of the benchmark's settings; empty when it has none.",
    )
    row_label = models.CharField(
        max_length=100,
        default="Human",
        validators=[one_line],
        help_text="The pooled row's label in the evaluation report.",
    )
    brief = models.TextField(
        blank=True, default="", validators=[valid_text], help_text="Shown to testers before they start."
    )
    guidance = models.TextField(
        blank=True,
        default="",
        validators=[valid_text],
        help_text="Shown with every practice item's answer (how to read it).",
    )
    items_per_tester = models.PositiveIntegerField(default=20)
    draw = models.CharField(max_length=16, choices=Draw.choices, default=Draw.RANDOM)
    seed = models.IntegerField(default=0)
    balance_by = models.CharField(
        max_length=32, blank=True, default="", help_text="Spread the drawn items evenly over this field."
    )
    fixed_items = models.JSONField(default=list, blank=True, help_text="External ids, for a fixed draw.")
    practice_items = models.JSONField(default=list, blank=True, help_text="External ids of practice items.")
    time_limit_s = models.PositiveIntegerField(
        null=True, blank=True, help_text="Seconds per trial; empty for no limit."
    )
    testers = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="test_plans", blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    pooled_submission = models.OneToOneField(
        Submission, null=True, blank=True, on_delete=models.SET_NULL, related_name="pooled_plan"
    )

    class Meta:
        ordering = ["-created_at"]
        permissions = [("view_results", "Can view test plan results and exports")]

    def __str__(self) -> str:
        return self.name

    @property
    def setting_label(self) -> str:
        """The setting as its benchmark names it ("Event"), "" for none."""
        return self.dataset.spec.setting_label(self.setting) if self.setting else ""


#: What a researcher chooses when making a plan: the form's and the API's writable fields.
PLAN_CHOICES = (
    "name",
    "dataset",
    "setting",
    "row_label",
    "brief",
    "guidance",
    "items_per_tester",
    "draw",
    "seed",
    "balance_by",
    "fixed_items",
    "practice_items",
    "time_limit_s",
    "testers",
)


class TestSession(models.Model):
    __test__ = False

    class Status(models.TextChoices):
        BRIEF = "brief", "Not started"
        PRACTICE = "practice", "Practising"
        RUNNING = "running", "In progress"
        PAUSED = "paused", "Paused"
        FINISHED = "finished", "Finished"

    plan = models.ForeignKey(TestPlan, on_delete=models.CASCADE, related_name="sessions")
    tester = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="test_sessions"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.BRIEF)
    practice_round = models.PositiveIntegerField(default=0)
    submission = models.OneToOneField(
        Submission, null=True, blank=True, on_delete=models.SET_NULL, related_name="test_session"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True, help_text="When the first test trial began.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["plan", "tester__username"]
        constraints = [models.UniqueConstraint(fields=["plan", "tester"], name="one_session_per_tester")]

    def __str__(self) -> str:
        return f"{self.tester} on {self.plan}"


class Trial(models.Model):
    class Phase(models.TextChoices):
        """Practice trials show the answer and count for nothing; test trials are the measurement."""

        PRACTICE = "practice", "Practice"
        TEST = "test", "Test"

    class Status(models.TextChoices):
        WAITING = "waiting", "Not shown yet"
        SERVED = "served", "Shown"
        ANSWERED = "answered", "Answered"
        TIMED_OUT = "timed_out", "Timed out"

    session = models.ForeignKey(TestSession, on_delete=models.CASCADE, related_name="trials")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    phase = models.CharField(max_length=16, choices=Phase.choices, default=Phase.TEST)
    round = models.PositiveIntegerField(default=0, help_text="Practice round; 0 for test trials.")
    position = models.PositiveIntegerField()
    part = models.PositiveIntegerField(
        default=0, help_text="Which question of the item (when an item holds several)."
    )
    context = models.JSONField(default=dict, blank=True, help_text="What the plan chose, e.g. the camera.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.WAITING)
    served_at = models.DateTimeField(null=True, blank=True)
    deadline = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    answer = models.JSONField(null=True, blank=True, help_text="In the benchmark's prediction format.")
    result = models.JSONField(default=dict, blank=True, help_text="The metric's row for this trial.")
    client = models.JSONField(
        default=dict, blank=True, help_text="Browser timings (performance.now, ms) and focus events."
    )
    focus_losses = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["session", "phase", "round", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["session", "phase", "round", "position"], name="one_trial_per_slot"
            )
        ]
        indexes = [models.Index(fields=["session", "phase", "status"], name="trial_session_status")]

    def __str__(self) -> str:
        return f"{self.phase} trial {self.position + 1} of {self.session}"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.ANSWERED, self.Status.TIMED_OUT)

    @property
    def seconds_used(self) -> float | None:
        return self.seconds_between(self.served_at, self.answered_at, self.deadline, self.status)

    @classmethod
    def seconds_between(cls, served_at, answered_at, deadline, status: str) -> float | None:
        """Seconds from serving to the answer, or to the deadline of a timed-out trial."""
        end = answered_at or (deadline if status == cls.Status.TIMED_OUT else None)
        if served_at is None or end is None:
            return None
        return (end - served_at).total_seconds()
