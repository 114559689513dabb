"""The catalog: a Dataset holds Items (and the Scenes several items share).

An item keeps what people may be shown (`payload`) apart from its `ground_truth`, so that
tester- and annotator-facing code can take the one without the other. Both are stored as the
benchmark's format module splits an official record, so an export rebuilds the file unchanged.

A dataset names its benchmark by the name its spec declares (benchmarks/registry.py); the
column has no fixed choices, so adding a benchmark needs no migration.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from accounts.inputs import one_line
from benchmarks import registry
from benchmarks.spec import BenchmarkSpec
from benchmarks.storage import upload_storage
from jobs.models import Job


class BenchmarkNamed:
    """For rows that name a benchmark: its spec and title."""

    benchmark: str

    @property
    def spec(self) -> BenchmarkSpec:
        return registry.get(self.benchmark)

    @property
    def benchmark_title(self) -> str:
        try:
            return self.spec.title
        except registry.UnknownBenchmark:
            return self.benchmark


class Dataset(BenchmarkNamed, models.Model):
    benchmark = models.CharField(max_length=32, help_text=_("The benchmark's name, as its spec declares it."))
    name = models.CharField(max_length=200, validators=[one_line])
    version = models.CharField(max_length=50, default="1", validators=[one_line])
    split = models.CharField(max_length=50, blank=True, default="", validators=[one_line])
    source = models.CharField(
        max_length=500, blank=True, default="", help_text=_("Where the data came from.")
    )
    meta = models.JSONField(
        default=dict, blank=True, help_text=_("File-level facts the exporter needs to write the file back.")
    )
    scenes_meta = models.JSONField(default=dict, blank=True)
    has_media = models.BooleanField(default=False, help_text=_("False when imported for scoring only."))
    item_count = models.PositiveIntegerField(default=0, editable=False)
    unit_count = models.PositiveIntegerField(
        default=0,
        editable=False,
        help_text=_("Scoring units: items, or their questions where an item holds several."),
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["benchmark", "name", "split", "version"]
        constraints = [
            models.UniqueConstraint(
                fields=["benchmark", "name", "split", "version"], name="dataset_unique_name_per_benchmark"
            )
        ]
        permissions = [
            ("import_dataset", "Can import datasets from official files"),
            ("export_dataset", "Can export datasets to official files"),
        ]

    def __str__(self) -> str:
        split = f" [{self.split}]" if self.split else ""
        return f"{self.benchmark_title}: {self.name}{split} v{self.version}"

    @property
    def title(self) -> str:
        """The benchmark and the dataset's name, as page titles and links name it ("<benchmark title> · demo"):
        datasets of different benchmarks may share a name."""
        return f"{self.benchmark_title} · {self.name}"

    @property
    def media_folder(self) -> str:
        """Where this dataset's files live in the media store (benchmarks/storage.py)."""
        return f"datasets/{self.pk}"

    def media_url(self, reference: str) -> str:
        """URL of a file the official record references (by bare name or by a path)."""
        name = reference.rsplit("/", 1)[-1]
        return f"{settings.MEDIA_URL}{self.media_folder}/{name}"


class Scene(models.Model):
    """An image with its scene description, shared by the items asked about it."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="scenes")
    position = models.PositiveIntegerField()
    external_id = models.CharField(max_length=200)
    data = models.JSONField(default=dict)
    image = models.CharField(max_length=500, blank=True, default="")

    class Meta:
        ordering = ["dataset", "position"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "external_id"], name="scene_unique_external_id")
        ]

    def __str__(self) -> str:
        return f"scene {self.external_id}"


class Item(models.Model):
    # No index of its own: the unique (dataset, external_id) index serves lookups by dataset,
    # and every index costs time on 500,000-row imports.
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="items", db_index=False)
    position = models.PositiveIntegerField(help_text=_("Order in the official file, kept on export."))
    external_id = models.CharField(max_length=200)
    payload = models.JSONField(default=dict, help_text=_("What annotators and testers may be shown."))
    ground_truth = models.JSONField(
        default=dict, help_text=_("Never sent to a tester before the answer is final.")
    )
    media = models.JSONField(
        default=dict, blank=True, help_text=_("Role -> file name in the dataset's media folder.")
    )
    scene = models.ForeignKey(Scene, null=True, blank=True, on_delete=models.SET_NULL, related_name="items")

    class Meta:
        ordering = ["dataset", "position"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "external_id"], name="item_unique_external_id")
        ]
        indexes = [models.Index(fields=["dataset", "position"], name="item_dataset_position")]

    def __str__(self) -> str:
        return f"{self.dataset.benchmark} item {self.external_id}"


class ItemMark(models.Model):
    """An item people found faulty (every validator of a validation plan rejected it).

    Marked items stay in the dataset and its exports; reports can be recomputed without them,
    side by side with the full set.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="marks")
    item = models.OneToOneField(Item, on_delete=models.CASCADE, related_name="mark")
    reason = models.TextField(blank=True, default="")
    source = models.CharField(max_length=200, blank=True, default="", help_text=_("What marked it."))
    marked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    marked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dataset", "item__position"]

    def __str__(self) -> str:
        return f"{self.item} marked faulty"


class ImportJob(BenchmarkNamed, Job):
    """An import started from the web or the API, run by a Celery worker, with its progress."""

    kind = "import"
    queue = "imports"

    benchmark = models.CharField(max_length=32)
    name = models.CharField(max_length=200, validators=[one_line])
    split = models.CharField(max_length=50, blank=True, default="", validators=[one_line])
    version = models.CharField(max_length=50, default="1", validators=[one_line])
    # Kept outside the media folder (benchmarks/storage.py) and removed when the job ends.
    upload = models.FileField(upload_to="imports/%Y/%m/", storage=upload_storage)
    scenes_upload = models.FileField(upload_to="imports/%Y/%m/", storage=upload_storage, blank=True)
    images_upload = models.FileField(
        upload_to="imports/%Y/%m/", storage=upload_storage, blank=True, help_text=_("A zip of the images.")
    )
    stage = models.CharField(max_length=100, blank=True, default="")
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    dataset = models.ForeignKey(Dataset, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="import_jobs"
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"import {self.pk} of {self.name} ({self.status})"
