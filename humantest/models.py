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
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.inputs import one_line, valid_text
from benchmarks.models import Dataset, Item
from evaluation.models import Submission


class TestPlan(models.Model):
    __test__ = False  # not a pytest test class

    class Draw(models.TextChoices):
        RANDOM = "random", _("Random per tester (seeded)")
        FIXED = "fixed", _("Fixed list, same for every tester")

    name = models.CharField(max_length=200, validators=[one_line])
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="test_plans")
    setting = models.CharField(
        max_length=16,
        blank=True,
        default="",
        help_text=_("One of the benchmark's settings; empty when it has none."),
    )
    row_label = models.CharField(
        max_length=100,
        default="Human",
        validators=[one_line],
        help_text=_("The pooled row's label in the evaluation report."),
    )
    brief = models.TextField(
        blank=True, default="", validators=[valid_text], help_text=_("Shown to testers before they start.")
    )
    guidance = models.TextField(
        blank=True,
        default="",
        validators=[valid_text],
        help_text=_("Shown with every practice item's answer (how to read it)."),
    )
    items_per_tester = models.PositiveIntegerField(default=20)
    draw = models.CharField(max_length=16, choices=Draw.choices, default=Draw.RANDOM)
    seed = models.IntegerField(default=0)
    balance_by = models.CharField(
        max_length=32, blank=True, default="", help_text=_("Spread the drawn items evenly over this field.")
    )
    fixed_items = models.JSONField(default=list, blank=True, help_text=_("External ids, for a fixed draw."))
    practice_items = models.JSONField(
        default=list, blank=True, help_text=_("External ids of practice items.")
    )
    time_limit_s = models.PositiveIntegerField(
        null=True, blank=True, help_text=_("Seconds per trial; empty for no limit.")
    )
    qualify_min_correct = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text=_("Practice answers a round must get right to go on to the test; empty: no qualification."),
    )
    qualify_rounds = models.PositiveIntegerField(
        default=1, help_text=_("Practice rounds a tester may take to qualify (with a qualification).")
    )
    catch_items = models.JSONField(
        default=list,
        blank=True,
        help_text=_("External ids of catch items: answers known and obvious, never measured."),
    )
    catch_count = models.PositiveIntegerField(
        default=0, help_text=_("Catch trials mixed into each tester's test trials, at seeded positions.")
    )
    catch_from_easy = models.BooleanField(
        default=False,
        help_text=_("Also draw catch items from items every tester so far answered right (two or more)."),
    )
    testers = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="test_plans", blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    pooled_submission = models.OneToOneField(
        Submission, null=True, blank=True, on_delete=models.SET_NULL, related_name="pooled_plan"
    )
    all_testers_submission = models.OneToOneField(
        Submission,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="all_testers_plan",
        help_text=_("With exclusion rules: every measured tester's row, beside the pooled row of the kept."),
    )

    class Meta:
        ordering = ["-created_at"]
        permissions = [("view_results", "Can view test plan results and exports")]

    def __str__(self) -> str:
        return self.name

    @property
    def setting_label(self) -> str:
        """The setting as its benchmark names it ("Event"), in the reader's language; "" for none."""
        return gettext(self.dataset.spec.setting_label(self.setting)) if self.setting else ""


def tester_label(user) -> str:
    """How a tester is named on pages and in exports: a study's participant by their platform id
    (their account's username is made up), anyone else by their username."""
    from django.core.exceptions import ObjectDoesNotExist

    try:
        return user.participant.external_id
    except ObjectDoesNotExist:
        return user.username


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
    "qualify_min_correct",
    "qualify_rounds",
    "catch_items",
    "catch_count",
    "catch_from_easy",
    "testers",
)


class TestSession(models.Model):
    __test__ = False

    class Status(models.TextChoices):
        BRIEF = "brief", _("Not started")
        PRACTICE = "practice", _("Practising")
        RUNNING = "running", _("In progress")
        PAUSED = "paused", _("Paused")
        FINISHED = "finished", _("Finished")
        SCREENED_OUT = "screened_out", _("Screened out")

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
    started_at = models.DateTimeField(null=True, blank=True, help_text=_("When the first test trial began."))
    finished_at = models.DateTimeField(null=True, blank=True)
    consented_at = models.DateTimeField(
        null=True, blank=True, help_text=_("Server time the consent was given.")
    )
    consent_version = models.PositiveIntegerField(null=True, blank=True, help_text=_("Which consent text."))
    declined_at = models.DateTimeField(
        null=True, blank=True, help_text=_("Server time the consent was declined.")
    )
    screened_out_at = models.DateTimeField(
        null=True, blank=True, help_text=_("Server time the practice qualification was failed for good.")
    )

    class Meta:
        ordering = ["plan", "tester__username"]
        constraints = [models.UniqueConstraint(fields=["plan", "tester"], name="one_session_per_tester")]

    def __str__(self) -> str:
        return f"{self.tester} on {self.plan}"

    @property
    def tester_label(self) -> str:
        return tester_label(self.tester)


class Trial(models.Model):
    class Phase(models.TextChoices):
        """Practice trials show the answer and count for nothing; test trials are the measurement;
        catch trials are mixed among the test trials, look like them, and only check attention."""

        PRACTICE = "practice", _("Practice")
        TEST = "test", _("Test")
        CATCH = "catch", _("Catch")

    #: The phases of the test's one sequence (numbered together, served in position order).
    SEQUENCE = (Phase.TEST, Phase.CATCH)

    class Status(models.TextChoices):
        WAITING = "waiting", _("Not shown yet")
        SERVED = "served", _("Shown")
        ANSWERED = "answered", _("Answered")
        TIMED_OUT = "timed_out", _("Timed out")

    session = models.ForeignKey(TestSession, on_delete=models.CASCADE, related_name="trials")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="+")
    phase = models.CharField(max_length=16, choices=Phase.choices, default=Phase.TEST)
    round = models.PositiveIntegerField(default=0, help_text=_("Practice round; 0 for test trials."))
    position = models.PositiveIntegerField()
    part = models.PositiveIntegerField(
        default=0, help_text=_("Which question of the item (when an item holds several).")
    )
    context = models.JSONField(default=dict, blank=True, help_text=_("What the plan chose, e.g. the camera."))
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.WAITING)
    served_at = models.DateTimeField(null=True, blank=True)
    deadline = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)
    answer = models.JSONField(null=True, blank=True, help_text=_("In the benchmark's prediction format."))
    result = models.JSONField(default=dict, blank=True, help_text=_("The metric's row for this trial."))
    client = models.JSONField(
        default=dict, blank=True, help_text=_("Browser timings (performance.now, ms) and focus events.")
    )
    focus_losses = models.PositiveIntegerField(default=0)
    hidden_ms = models.FloatField(
        default=0, help_text=_("Milliseconds the page was hidden (Page Visibility) while the trial was open.")
    )

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


# --- studies: participants who arrive by link, their consent, completion and pay -----------------


class Study(models.Model):
    """What a plan needs to take participants by link (from Prolific, MTurk or a lab list): its
    consent text, when it is open and how many it takes, the platform's codes and where to send
    people back, and how they are paid. Made when a researcher first opens a plan to participants;
    its settings can change while the plan runs, each consent text kept with its version."""

    plan = models.OneToOneField(TestPlan, on_delete=models.CASCADE, related_name="study")
    consent_text = models.TextField(
        blank=True, default="", validators=[valid_text], help_text=_("Markdown; empty: no consent page.")
    )
    consent_version = models.PositiveIntegerField(
        default=0, help_text=_("Bumped on every change of the consent text (0: none yet).")
    )
    opens_at = models.DateTimeField(null=True, blank=True, help_text=_("Empty: open now."))
    closes_at = models.DateTimeField(null=True, blank=True, help_text=_("Empty: until it is full."))
    participant_cap = models.PositiveIntegerField(
        null=True, blank=True, help_text=_("At most this many participants (returned ones free their place).")
    )
    idle_limit_s = models.PositiveIntegerField(
        default=3600, help_text=_("A participant silent this long has returned (abandoned) the study.")
    )
    completion_code = models.CharField(max_length=64, blank=True, default="", validators=[one_line])
    completion_url = models.URLField(max_length=500, blank=True, default="")
    screen_out_code = models.CharField(max_length=64, blank=True, default="", validators=[one_line])
    screen_out_url = models.URLField(max_length=500, blank=True, default="")
    no_consent_code = models.CharField(max_length=64, blank=True, default="", validators=[one_line])
    no_consent_url = models.URLField(max_length=500, blank=True, default="")
    currency = models.CharField(max_length=3, default="GBP", validators=[one_line])
    base_pay = models.DecimalField(max_digits=8, decimal_places=2, default=0)
    bonus_per_correct = models.DecimalField(
        max_digits=8, decimal_places=2, default=0, help_text=_("Paid per correct test trial.")
    )
    bonus_threshold = models.FloatField(
        null=True, blank=True, help_text=_("An accuracy (0 to 1) at or above which `bonus_above` is paid.")
    )
    bonus_above = models.DecimalField(max_digits=8, decimal_places=2, default=0)
    bonus_cap = models.DecimalField(
        max_digits=8, decimal_places=2, null=True, blank=True, help_text=_("The most bonus one person gets.")
    )
    # Stopping for precision (optional): stop taking participants once the human-vs-model paired
    # interval is narrow enough, or the planned number of kept finishers is reached.
    stop_against = models.CharField(
        max_length=200, blank=True, default="", validators=[one_line],
        help_text=_("The report row (a model) whose paired interval with the Human row is watched."),
    )  # fmt: skip
    stop_metric = models.CharField(
        max_length=32,
        blank=True,
        default="",
        help_text=_("The report column watched; empty: the benchmark's headline."),
    )
    stop_width = models.FloatField(
        null=True,
        blank=True,
        help_text=_("Stop once the 95 percent interval of the difference is at most this wide."),
    )
    planned_participants = models.PositiveIntegerField(
        null=True, blank=True, help_text=_("Stop once this many kept participants have finished.")
    )
    precision_width = models.FloatField(
        null=True, blank=True, help_text=_("The interval's width, last computed.")
    )
    precision_note = models.CharField(
        max_length=300, blank=True, default="", help_text=_("Why no width yet.")
    )
    precision_at = models.DateTimeField(null=True, blank=True)
    stopped_at = models.DateTimeField(null=True, blank=True, help_text=_("When a stopping rule was met."))
    stopped_because = models.CharField(max_length=300, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = _("studies")

    def __str__(self) -> str:
        return f"study of {self.plan}"


class ConsentText(models.Model):
    """One version of a study's consent text, as participants were shown it."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="consent_texts")
    version = models.PositiveIntegerField()
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["study", "version"]
        constraints = [
            models.UniqueConstraint(fields=["study", "version"], name="one_consent_text_per_version")
        ]

    def __str__(self) -> str:
        return f"consent text {self.version} of {self.study}"


class EntryLink(models.Model):
    """A secret address by which participants of one platform arrive at a plan; revoked, it stops
    taking anyone (a new one is made to go on)."""

    class Platform(models.TextChoices):
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", _("Amazon Mechanical Turk")
        LAB = "lab", _("A list of participant ids (lab)")

    plan = models.ForeignKey(TestPlan, on_delete=models.CASCADE, related_name="entry_links")
    platform = models.CharField(max_length=16, choices=Platform.choices)
    token = models.CharField(max_length=64, unique=True)
    lab_ids = models.JSONField(default=list, blank=True, help_text=_("For a lab list: the ids it admits."))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["plan", "-created_at"]

    def __str__(self) -> str:
        return f"{self.get_platform_display()} link of {self.plan}"


class Participant(models.Model):
    """Somebody who arrived by an entry link: their platform id, the attempt that arrived, their own
    account (of the participant kind: it opens this plan's pages and nothing else) and session."""

    class Status(models.TextChoices):
        ARRIVED = "arrived", _("Arrived")
        CONSENTED = "consented", _("Consented")
        DECLINED = "declined", _("Declined consent")
        SCREENED_OUT = "screened_out", _("Screened out")
        FINISHED = "finished", _("Finished")
        RETURNED = "returned", _("Returned (abandoned)")

    plan = models.ForeignKey(TestPlan, on_delete=models.CASCADE, related_name="participants")
    link = models.ForeignKey(EntryLink, on_delete=models.PROTECT, related_name="participants")
    platform = models.CharField(max_length=16, choices=EntryLink.Platform.choices)
    external_id = models.CharField(max_length=200, help_text=_("PROLIFIC_PID, workerId or the lab id."))
    attempt_id = models.CharField(
        max_length=200, blank=True, default="", help_text=_("This attempt's SESSION_ID or assignmentId.")
    )
    platform_study = models.CharField(
        max_length=200, blank=True, default="", help_text=_("STUDY_ID or hitId.")
    )
    return_to = models.URLField(max_length=500, blank=True, default="", help_text=_("MTurk's turkSubmitTo."))
    resume_code = models.CharField(max_length=32)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="participant"
    )
    session = models.OneToOneField(
        TestSession, null=True, blank=True, on_delete=models.SET_NULL, related_name="participant"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ARRIVED)
    arrived_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    returned_at = models.DateTimeField(null=True, blank=True)
    code_shown_at = models.DateTimeField(null=True, blank=True, help_text=_("When the code was first shown."))

    class Meta:
        ordering = ["plan", "arrived_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["plan", "platform", "external_id"], name="one_participant_per_platform_id"
            )
        ]
        indexes = [models.Index(fields=["plan", "status"], name="participant_plan_status")]

    def __str__(self) -> str:
        return f"{self.get_platform_display()} {self.external_id} on {self.plan}"


class PaymentBatch(models.Model):
    """One download of a plan's payments: every participant in it is paid by it, and by no other."""

    plan = models.ForeignKey(TestPlan, on_delete=models.CASCADE, related_name="payment_batches")
    number = models.PositiveIntegerField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    rule = models.JSONField(
        default=dict, help_text=_("The pay rule as it stood: base, bonus, cap, currency.")
    )

    class Meta:
        ordering = ["plan", "number"]
        constraints = [models.UniqueConstraint(fields=["plan", "number"], name="one_batch_number_per_plan")]

    def __str__(self) -> str:
        return f"payment batch {self.number} of {self.plan}"


class Payment(models.Model):
    """What one participant earns, computed once by the plan's rule and exported in one batch."""

    participant = models.OneToOneField(Participant, on_delete=models.CASCADE, related_name="payment")
    batch = models.ForeignKey(PaymentBatch, on_delete=models.PROTECT, related_name="payments")
    base = models.DecimalField(max_digits=8, decimal_places=2)
    bonus = models.DecimalField(max_digits=8, decimal_places=2)
    correct = models.PositiveIntegerField()
    trials = models.PositiveIntegerField()
    seconds = models.FloatField(
        null=True, blank=True, help_text=_("Server-clock seconds from arrival to finish.")
    )

    class Meta:
        ordering = ["batch", "participant__arrived_at"]

    def __str__(self) -> str:
        return f"{self.participant}: {self.base} + {self.bonus}"


# --- quality: exclusion rules stated before data comes in, and the reporting checklist -----------


class ExclusionRules(models.Model):
    """One version of a plan's exclusion rules. A version is fixed when the plan's first tester
    starts the test; a change after that makes a new version, and every version's numbers stay
    available (the report says which version its Human row uses: the newest)."""

    plan = models.ForeignKey(TestPlan, on_delete=models.CASCADE, related_name="exclusion_rules")
    version = models.PositiveIntegerField()
    catch_failures = models.PositiveIntegerField(
        null=True, blank=True, help_text=_("Exclude a tester who fails at least this many catch trials.")
    )
    min_median_s = models.FloatField(
        null=True,
        blank=True,
        help_text=_("Exclude a tester whose median seconds per test trial is under this."),
    )
    max_hidden_s = models.FloatField(
        null=True,
        blank=True,
        help_text=_("Exclude a tester whose page was hidden longer than this in total."),
    )
    max_focus_losses = models.PositiveIntegerField(
        null=True, blank=True, help_text=_("Exclude a tester who left the page more often than this.")
    )
    exclude_unfinished = models.BooleanField(default=True, help_text=_("Exclude sessions not finished."))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    fixed_at = models.DateTimeField(
        null=True, blank=True, help_text=_("When the first tester started: later changes make a new version.")
    )

    class Meta:
        ordering = ["plan", "version"]
        constraints = [models.UniqueConstraint(fields=["plan", "version"], name="one_rule_set_per_version")]

    def __str__(self) -> str:
        return f"exclusion rules v{self.version} of {self.plan}"


class ReportAnswers(models.Model):
    """What the reporting checklist asks that Yardstick cannot know (ethics review, population,
    pre-registration, authors as baseliners, the paper): asked once per plan on a form."""

    plan = models.OneToOneField(TestPlan, on_delete=models.CASCADE, related_name="report_answers")
    answers = models.JSONField(default=dict, blank=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"report answers of {self.plan}"


class Preregistration(models.Model):
    """The plan's design as exported before data collection; the report compares what ran with it."""

    plan = models.ForeignKey(TestPlan, on_delete=models.CASCADE, related_name="preregistrations")
    design = models.JSONField(help_text=_("The design document's facts, as exported."))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["plan", "created_at"]

    def __str__(self) -> str:
        return f"pre-registration of {self.plan} at {self.created_at:%Y-%m-%d %H:%M}"
