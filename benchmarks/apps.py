from django.apps import AppConfig


class BenchmarksConfig(AppConfig):
    """The catalog: datasets, scenes and items of every benchmark, with import and export."""

    name = "benchmarks"
