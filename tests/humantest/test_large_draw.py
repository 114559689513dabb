"""A random draw from a large dataset reads only the rows it draws (perf/results/humantest_draw.md):
here the threshold is lowered so that the 12-sample TRANCE set counts as large."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from humantest import drawing
from humantest.models import TestPlan
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def test_a_large_random_draw_reads_only_drawn_rows_and_keeps_every_rule(trance_dataset, monkeypatch):
    monkeypatch.setattr(drawing, "DIRECT_DRAW_MIN_ITEMS", 5)
    alice, bob = make_user("alice", "tester"), make_user("bob", "tester")
    one_step = sorted(
        item.external_id
        for item in trance_dataset.items.all()
        if len(item.ground_truth["transformations"]) == 1
    )
    assert len(one_step) >= 3
    plan = TestPlan.objects.create(
        dataset=trance_dataset,
        name="Basic",
        setting="basic",
        items_per_tester=2,
        seed=3,
        practice_items=one_step[:1],
    )
    with CaptureQueriesContext(connection) as queries:
        first = drawing.draw_units(plan, alice)
    item_reads = [q["sql"] for q in queries.captured_queries if 'FROM "benchmarks_item"' in q["sql"]]
    assert item_reads and all('"position" IN' in sql for sql in item_reads)  # no scan of every item
    external_id = dict(trance_dataset.items.values_list("pk", "external_id"))
    drawn = [external_id[pk] for pk, _, _ in first]
    assert len(set(drawn)) == 2 and set(drawn) <= set(one_step[1:])  # one-step only, no practice item
    assert drawing.draw_units(plan, alice) == first  # reproducible per plan and tester
    assert [pk for pk, _, _ in drawing.draw_units(plan, bob)] != [pk for pk, _, _ in first] or len(
        one_step
    ) < 4

    # Asked for more usable items than there are: the full scan decides, as for a small dataset.
    plan.items_per_tester = 50
    drawn = [external_id[pk] for pk, _, _ in drawing.draw_units(plan, alice)]
    assert sorted(drawn) == one_step[1:]
