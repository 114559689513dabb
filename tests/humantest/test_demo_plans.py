"""`load_samples` gives the demo tester a short test on each demo dataset (make run's first screen)."""

import pytest

from benchmarks.management.commands.load_samples import DEMO_NAME, create_demo_plans, create_demo_users
from humantest import services
from humantest.models import TestPlan
from yardstick.roles import sync_roles

pytestmark = pytest.mark.django_db


def test_the_demo_tester_gets_a_test_per_demo_dataset_once(trance_dataset):
    sync_roles()
    create_demo_users()
    trance_dataset.name = DEMO_NAME
    trance_dataset.save()
    assert create_demo_plans() == ["TRANCE Event (demo)"]
    plan = TestPlan.objects.get()
    assert [user.username for user in plan.testers.all()] == ["tester"]
    assert plan.practice_items == ["0", "1"] and plan.time_limit_s == 180
    session = services.start_session(plan, plan.testers.get())
    drawn = set(session.trials.values_list("item__external_id", flat=True))
    assert len(drawn) == 6 and not drawn & {"0", "1"}
    assert create_demo_plans() == []  # running load_samples again adds nothing
