from django.apps import AppConfig


class YardstickConfig(AppConfig):
    """The project package as an app: the home page, the shared layout, the demo loader, the
    checks `manage.py check --deploy` runs (yardstick/checks.py) and the requests' log fields."""

    name = "yardstick"
    verbose_name = "Yardstick"

    def ready(self) -> None:
        from django.core import checks
        from django.core.signals import request_finished, request_started

        from yardstick.checks import CHECKS
        from yardstick.logs import request_over

        for check in CHECKS:
            checks.register(check, "yardstick", deploy=True)
        # A request's log fields last until its response is closed (yardstick/logs.py).
        request_started.connect(request_over, dispatch_uid="yardstick.logs.request_started")
        request_finished.connect(request_over, dispatch_uid="yardstick.logs.request_finished")
