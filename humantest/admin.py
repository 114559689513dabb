from django.contrib import admin

from humantest.models import TestPlan, TestSession, Trial


@admin.register(TestPlan)
class TestPlanAdmin(admin.ModelAdmin):
    list_display = ["name", "dataset", "setting", "items_per_tester", "time_limit_s", "created_at"]
    filter_horizontal = ["testers"]


@admin.register(TestSession)
class TestSessionAdmin(admin.ModelAdmin):
    list_display = ["plan", "tester", "status", "started_at", "finished_at"]
    list_filter = ["status"]


@admin.register(Trial)
class TrialAdmin(admin.ModelAdmin):
    list_display = ["session", "phase", "round", "position", "status", "served_at", "answered_at"]
    list_filter = ["phase", "status"]
    raw_id_fields = ["session", "item"]
