from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    """The catalog: datasets, scenes and items of every benchmark, with import and export."""

    name = "benchmarks"

    def ready(self) -> None:
        from benchmarks.models import ImportJob
        from benchmarks.services import import_lost
        from jobs.services import when_lost

        when_lost(ImportJob, import_lost)
