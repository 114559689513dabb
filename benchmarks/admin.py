from django.contrib import admin

from benchmarks.models import Dataset, ImportJob, Item, Scene


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ("name", "benchmark", "split", "version", "item_count", "has_media", "created_at")
    list_filter = ("benchmark", "has_media")
    search_fields = ("name", "source")


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ("external_id", "dataset", "position")
    list_filter = ("dataset",)
    search_fields = ("external_id",)
    raw_id_fields = ("dataset", "scene")


@admin.register(Scene)
class SceneAdmin(admin.ModelAdmin):
    list_display = ("external_id", "dataset", "image")
    raw_id_fields = ("dataset",)


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ("name", "benchmark", "status", "created_by", "created_at", "finished_at")
    list_filter = ("status", "benchmark")
    # Uploads are private (no URL) and belong to the job's run: shown by name, never edited here.
    exclude = ("upload", "scenes_upload", "images_upload")
    readonly_fields = ("uploaded_files",)

    @admin.display(description="Uploaded files (removed when the job ends)")
    def uploaded_files(self, job: ImportJob) -> str:
        return (
            ", ".join(upload.name for upload in (job.upload, job.scenes_upload, job.images_upload) if upload)
            or "–"
        )
