"""API shapes of model runs."""

from __future__ import annotations

from django.urls import reverse
from rest_framework import serializers

from accounts.inputs import INT32_BOUNDS
from benchmarks.models import Dataset
from inference.models import ModelRun
from inference.selectors import checkpoint_files
from inference.services import MAX_BATCH_SIZE


class ModelRunSerializer(serializers.ModelSerializer):
    percent = serializers.IntegerField(read_only=True)
    summary = serializers.SerializerMethodField()
    audit = serializers.SerializerMethodField(
        help_text="A served model's requests and responses (JSON lines), once its run has ended; null otherwise."
    )

    class Meta:
        model = ModelRun
        fields = [
            "id", "dataset", "baseline", "plugin", "setting", "device", "used_device", "batch_size", "seed",
            "options", "checkpoint_sha256", "code_version", "parameters", "status", "stage", "done", "total",
            "percent", "cancel_requested", "error", "submission", "summary", "audit", "created_at",
            "started_at", "heartbeat_at", "finished_at",
        ]  # fmt: skip
        read_only_fields = fields

    def get_summary(self, run: ModelRun) -> dict | None:
        return run.submission.summary if run.submission_id else None

    def get_audit(self, run: ModelRun) -> str | None:
        if not run.audit:
            return None
        url = reverse("modelrun-audit", args=[run.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request is not None else url


class StartRunSerializer(serializers.Serializer):
    dataset = serializers.PrimaryKeyRelatedField(queryset=Dataset.objects.all())
    baseline = serializers.CharField(max_length=64)
    setting = serializers.CharField(required=False, allow_blank=True, default=None)
    checkpoint = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="The file name of a checkpoint in the server's checkpoint folder (empty: the baseline's own).",
    )
    device = serializers.ChoiceField(choices=ModelRun.Device.values, default=ModelRun.Device.AUTO)
    batch_size = serializers.IntegerField(
        min_value=1,
        max_value=MAX_BATCH_SIZE,
        default=None,
        allow_null=True,
        help_text="Empty: the model's own (32 for the baselines; a plug-in declares its own).",
    )
    seed = serializers.IntegerField(default=0, **INT32_BOUNDS)
    options = serializers.JSONField(
        required=False,
        default=dict,
        help_text=(
            'The served model\'s: {"endpoint", "protocol": "openai" | "yardstick", "model", "api_key_env" '
            '(the name of an environment variable on the worker holding the key), "concurrency", "timeout_s", '
            '"retries", "max_tokens"}; other models take none.'
        ),
    )

    def validate_options(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError("expected an object of the served model's options")
        return value

    def validate_checkpoint(self, value: str) -> str:
        if not value:
            return ""
        known = checkpoint_files()
        if value not in known:
            names = ", ".join(sorted(known)) or "none"
            raise serializers.ValidationError(
                f"no checkpoint named {value!r} on the server (it has: {names})"
            )
        return known[value]
