from django.contrib import admin

from validation.models import Plan, Sampled, Verdict


@admin.register(Plan)
class PlanAdmin(admin.ModelAdmin):
    list_display = ("name", "dataset", "allocation", "confidence", "seed", "created_at")
    raw_id_fields = ("dataset", "project", "created_by")


@admin.register(Sampled)
class SampledAdmin(admin.ModelAdmin):
    list_display = ("plan", "item", "stratum")
    raw_id_fields = ("plan", "item", "task")


@admin.register(Verdict)
class VerdictAdmin(admin.ModelAdmin):
    list_display = ("sampled", "validator", "round", "error", "submitted_at")
    raw_id_fields = ("assignment", "sampled", "validator")
