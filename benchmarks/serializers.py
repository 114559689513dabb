from rest_framework import serializers

from benchmarks import registry
from benchmarks.models import Dataset, ImportJob, Item
from benchmarks.storage import check_upload_size


class DatasetSerializer(serializers.ModelSerializer):
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Dataset
        fields = [
            "id",
            "benchmark",
            "name",
            "version",
            "split",
            "source",
            "item_count",
            "has_media",
            "created_by",
            "created_at",
        ]
        read_only_fields = fields


class ItemSerializer(serializers.ModelSerializer):
    """The researcher's view of an item: payload and ground truth, side by side."""

    scene = serializers.SlugRelatedField(slug_field="external_id", read_only=True)

    class Meta:
        model = Item
        fields = ["id", "external_id", "position", "payload", "ground_truth", "media", "scene"]
        read_only_fields = fields


class ImportJobSerializer(serializers.ModelSerializer):
    """An import job: POST the official file (multipart) to start one, GET it to follow it."""

    benchmark = serializers.ChoiceField(choices=[])
    upload = serializers.FileField(
        write_only=True, help_text="The official file.", validators=[check_upload_size]
    )
    scenes_upload = serializers.FileField(write_only=True, required=False, validators=[check_upload_size])
    images_upload = serializers.FileField(
        write_only=True, required=False, help_text="A zip of the images.", validators=[check_upload_size]
    )
    progress = serializers.SerializerMethodField()
    dataset = serializers.PrimaryKeyRelatedField(read_only=True)

    class Meta:
        model = ImportJob
        fields = [
            "id",
            "benchmark",
            "name",
            "split",
            "version",
            "upload",
            "scenes_upload",
            "images_upload",
            "status",
            "progress",
            "errors",
            "dataset",
            "created_at",
            "finished_at",
        ]
        read_only_fields = ["id", "status", "progress", "errors", "dataset", "created_at", "finished_at"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["benchmark"].choices = registry.choices()
        self.fields["scenes_upload"].help_text = f"The scenes file of {registry.scenes_titles()}."

    def get_progress(self, job: ImportJob) -> dict:
        return job.progress()
