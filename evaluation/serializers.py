from rest_framework import serializers

from benchmarks.storage import check_upload_size
from evaluation.models import ScoringJob, Submission


class SubmissionSerializer(serializers.ModelSerializer):
    """A submission: POST a prediction file (multipart) to add and score one; GET its summary."""

    file = serializers.FileField(
        write_only=True,
        help_text="The predictions in the benchmark's format.",
        validators=[check_upload_size],
    )
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Submission
        fields = [
            "id",
            "dataset",
            "producer",
            "origin",
            "name",
            "setting",
            "variant",
            "file",
            "source",
            "summary",
            "parameters",
            "problems",
            "scored_at",
            "created_by",
            "created_at",
        ]
        read_only_fields = [
            "id",
            "origin",
            "source",
            "summary",
            "parameters",
            "problems",
            "scored_at",
            "created_by",
            "created_at",
        ]


class ScoringJobSerializer(serializers.ModelSerializer):
    """A prediction file being scored by a worker (an upload to a large dataset): its status, its
    progress while it runs, the submission it fills, and the reasons when it failed."""

    progress = serializers.SerializerMethodField()
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = ScoringJob
        fields = [
            "id", "dataset", "submission", "name", "status", "progress", "errors", "created_by",
            "created_at", "started_at", "finished_at",
        ]  # fmt: skip
        read_only_fields = fields

    def get_progress(self, job: ScoringJob) -> dict:
        return job.progress()
