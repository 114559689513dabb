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
    readonly_fields = [field.name for field in ModelRun._meta.fields]
