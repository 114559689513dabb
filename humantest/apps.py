from django.apps import AppConfig


class HumantestConfig(AppConfig):
    """Test plans, tester sessions, practice and timed trials (built in a later issue)."""

    name = "humantest"
