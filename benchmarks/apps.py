from django.apps import AppConfig
from django.db import transaction
from django.db.models.signals import post_delete


class BenchmarksConfig(AppConfig):
    """The catalog: datasets, scenes and items of every benchmark, with import and export."""

    name = "benchmarks"

    def ready(self) -> None:
        from benchmarks.models import ImportJob
        from benchmarks.services import import_lost
        from jobs.services import when_lost

        when_lost(ImportJob, import_lost)
        post_delete.connect(
            media_removed_with_the_dataset, sender="benchmarks.Dataset", dispatch_uid="benchmarks.media"
        )


def media_removed_with_the_dataset(sender, instance, **kwargs) -> None:
    """A deleted dataset's media folder goes from the store once the deletion is committed."""
    from benchmarks.storage import delete_folder, media

    if instance.has_media:
        transaction.on_commit(lambda folder=instance.media_folder: delete_folder(media, folder))
