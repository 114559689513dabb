from django.apps import AppConfig


class YardstickConfig(AppConfig):
    """The project package as an app: the home page, the shared layout, the demo loader."""

    name = "yardstick"
    verbose_name = "Yardstick"
