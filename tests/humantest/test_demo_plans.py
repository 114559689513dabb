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


def test_the_demo_models_answer_trance_in_event_and_view_so_the_view_tables_show(trance_dataset, monkeypatch):
    """TRANCE's demo runs its baselines in Event and in View, so the demo report has View's columns
    and its per-camera table; a second load adds nothing."""
    from evaluation.selectors import diagnostic_tables, report_table
    from inference import demo

    sync_roles()
    create_demo_users()
    spec = registry.get("trance")
    # The learned model is left out here (its own tests run it); the others answer every sample.
    monkeypatch.setattr(
        demo, "baselines_of", lambda spec: [b for b in registry_baselines(spec) if b.name != "trancenet"]
    )
    made = demo.create_demo_runs(spec, trance_dataset)
    assert len(made) == 4 and sum(" View (" in line for line in made) == 2, made
    table = report_table(trance_dataset)
    symbolic = next(row for row in table.rows if row.label == "Symbolic solver")
    view_acc = next(
        cell
        for column, cell in zip(table.columns, symbolic.cells, strict=True)
        if (column.setting, column.label) == ("view", "Acc")
    )
    assert view_acc.value == 1.0 and view_acc.n == 3 * trance_dataset.item_count
    assert "by-camera" in {t.diagnostic.key for t in diagnostic_tables(trance_dataset)}
    assert demo.create_demo_runs(spec, trance_dataset) == []


def registry_baselines(spec):
    from inference.baselines import baselines_of

    return baselines_of(spec)
