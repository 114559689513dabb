from django.contrib import admin

from inference.models import ModelRun


@admin.register(ModelRun)
class ModelRunAdmin(admin.ModelAdmin):
    list_display = [
        "pk",
        "baseline",
        "dataset",
        "setting",
        "status",
        "done",
        "total",
        "used_device",
        "created_at",
    ]
    list_filter = ["status", "baseline"]
    # The prediction file lives outside the media folder (no URL): its name is shown, not a link.
    exclude = ["predictions", "audit"]
    readonly_fields = [
        field.name for field in ModelRun._meta.fields if field.name not in ("predictions", "audit")
    ] + ["predictions_file", "audit_file"]

    @admin.display(description="predictions file")
    def predictions_file(self, run: ModelRun) -> str:
        return run.predictions.name or "–"

    @admin.display(description="requests and responses")
    def audit_file(self, run: ModelRun) -> str:
        return run.audit.name or "–"
