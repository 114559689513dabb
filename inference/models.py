"""Model runs: a baseline answering a dataset's units in a worker, its answers then scored as a submission.

A run is started from a page, the API or `manage.py run_baseline`; a job on the Celery `gpu`
queue (or the command itself) answers the units in batches, writing its progress and a sign of
life on the row; the answers become a prediction file in the benchmark's official format and,
through `evaluation.services.submit_predictions`, a model submission scored like any upload.
Only `inference.services` writes these rows.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from benchmarks.models import BenchmarkNamed, Dataset
from benchmarks.storage import upload_storage
from evaluation.models import Submission
from jobs.models import Job


class ModelRun(BenchmarkNamed, Job):
    """A baseline (or a model plug-in) run on a dataset by a worker of the `gpu` queue. Its progress
    is written on its row as well as beat to the cache: a GPU worker may share no cache with the
    web server."""

    kind = "model-run"
    queue = "gpu"
    progress_in_cache = False

    class Device(models.TextChoices):
        AUTO = "auto", _("GPU if the worker has one, else CPU")
        CPU = "cpu", _("CPU")
        CUDA = "cuda", _("GPU (CUDA)")

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="model_runs")
    baseline = models.CharField(
        max_length=64, help_text=_("The baseline's name, as its benchmark declares it.")
    )
    setting = models.CharField(max_length=32, blank=True, default="")
    device = models.CharField(max_length=8, choices=Device.choices, default=Device.AUTO)
    used_device = models.CharField(
        max_length=32, blank=True, default="", help_text=_("What the worker ran on.")
    )
    batch_size = models.PositiveIntegerField(default=32)
    seed = models.IntegerField(default=0)
    checkpoint = models.CharField(
        max_length=500,
        blank=True,
        default="",
        help_text=_("The checkpoint file (learned baselines), as given."),
    )
    checkpoint_sha256 = models.CharField(max_length=64, blank=True, default="")
    plugin = models.CharField(
        max_length=300,
        blank=True,
        default="",
        help_text=_('A model plug-in\'s "module:Class" path (empty for a baseline): the worker imports it.'),
    )
    options = models.JSONField(
        default=dict, blank=True, help_text=_("A served model's endpoint and request settings.")
    )
    code_version = models.CharField(max_length=64, blank=True, default="")
    parameters = models.JSONField(default=dict, blank=True, help_text=_("What the baseline says of itself."))
    stage = models.CharField(max_length=100, blank=True, default="")
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    error = models.TextField(blank=True, default="")
    predictions = models.FileField(upload_to="model-runs/%Y/%m/", storage=upload_storage, blank=True)
    audit = models.FileField(
        upload_to="model-runs/%Y/%m/",
        storage=upload_storage,
        blank=True,
        help_text=_("A served model's requests and responses, one JSON line each."),
    )
    submission = models.ForeignKey(
        Submission, null=True, blank=True, on_delete=models.SET_NULL, related_name="model_runs"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="model_runs"
    )
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text=_("The last sign of life from the worker.")
    )

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"model run {self.pk}: {self.baseline} on {self.dataset} ({self.status})"

    @property
    def benchmark(self) -> str:
        return self.dataset.benchmark

    @property
    def checkpoint_name(self) -> str:
        """The checkpoint's file name (the page shows no server paths; a stored one is "stored:<name>")."""
        return self.checkpoint.replace("\\", "/").rsplit("/", 1)[-1].removeprefix("stored:")
