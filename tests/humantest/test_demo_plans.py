"""`load_demo` gives the demo tester a short test on each demo dataset (make run's first screen)."""

import pytest

from accounts.roles import sync_roles
from benchmarks import registry
from humantest import sessions
from humantest.models import TestPlan
from yardstick.management.commands.load_demo import DEMO_NAME, create_demo_plan, create_demo_users

pytestmark = pytest.mark.django_db


def test_the_demo_tester_gets_a_test_per_demo_dataset_once(trance_dataset):
    sync_roles()
    create_demo_users()
    trance_dataset.name = DEMO_NAME
    trance_dataset.save()
    assert create_demo_plan(registry.get("trance"), trance_dataset) == "TRANCE Event (demo)"
    plan = TestPlan.objects.get()
    assert [user.username for user in plan.testers.all()] == ["tester"]
    # Practice starts with an item that moves an object "behind" (its guidance teaches the
    # direction words), then the first item.
    assert plan.practice_items == ["2", "0"] and plan.time_limit_s == 180
    first = trance_dataset.items.get(external_id="2").ground_truth["transformations"]
    assert any(step["attr"] == "position" and step["val"][0] == "behind" for step in first)
    assert (plan.setting, plan.balance_by, plan.created_by.username) == ("event", "length", "researcher")
    session = sessions.start_session(plan, plan.testers.get())
    drawn = set(session.trials.values_list("item__external_id", flat=True))
    assert len(drawn) == 6 and not drawn & {"2", "0"}
    # running load_demo again adds nothing
    assert create_demo_plan(registry.get("trance"), trance_dataset) is None
    assert TestPlan.objects.count() == 1
