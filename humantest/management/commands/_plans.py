"""What the study commands share: finding a plan by id or unique name."""

from django.core.management.base import CommandError

from humantest.models import TestPlan


def find_plan(key: str) -> TestPlan:
    if key.isdigit():
        plan = TestPlan.objects.filter(pk=int(key)).first()
    else:
        found = list(TestPlan.objects.filter(name=key)[:2])
        if len(found) > 1:
            raise CommandError(f"two test plans are called {key!r}: give its id")
        plan = found[0] if found else None
    if plan is None:
        raise CommandError(f"no test plan {key!r} (give its id or its name)")
    return plan
