from django.contrib import admin

from annotation.models import Assignment, Project, QAPair, QARevision, Task


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "dataset", "pairs_per_item", "overlap", "lease_seconds", "created_at"]
    filter_horizontal = ["annotators", "reviewers"]
    raw_id_fields = ["dataset", "published"]


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ["project", "position", "opinions", "next_round", "available"]
    list_filter = ["available", "opinions"]
    raw_id_fields = ["project", "item"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["task", "round", "annotator", "status", "leased_at", "lease_expires_at", "submitted_at"]
    list_filter = ["status", "round"]
    raw_id_fields = ["task", "annotator"]


class RevisionInline(admin.TabularInline):
    model = QARevision
    extra = 0
    readonly_fields = ["version", "kind", "question", "answer", "evidence", "author", "created_at"]


@admin.register(QAPair)
class QAPairAdmin(admin.ModelAdmin):
    list_display = ["question", "answer", "language", "review", "version", "assignment"]
    list_filter = ["review", "language"]
    raw_id_fields = ["assignment", "source", "reviewed_by"]
    inlines = [RevisionInline]
