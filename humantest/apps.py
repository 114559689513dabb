from django.apps import AppConfig


class HumantestConfig(AppConfig):
    """Test plans, tester sessions, practice and timed trials ; human baselines scored by the evaluation engine."""

    name = "humantest"
