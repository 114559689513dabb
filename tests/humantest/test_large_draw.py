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


def one_and_two_step_dataset(one_step_every: int):
    """400 TRANCE samples; every `one_step_every`-th has one transformation, the others two."""
    import orjson

    from benchmarks.services import import_dataset
    from tests.benchmarks import builders

    samples = []
    for idx in range(400):
        sample = builders.trance_sample(idx)
        if idx % one_step_every == 0:
            sample["transformations"] = sample["transformations"][:1]
        samples.append(sample)
    data = b"\n".join(orjson.dumps(sample) for sample in samples)
    return import_dataset(benchmark="trance", data=data, name=f"lengths {one_step_every}")


def lengths_of(dataset, units):
    length = {item.pk: len(item.ground_truth["transformations"]) for item in dataset.items.all()}
    return sorted(length[pk] for pk, _, _ in units)


def test_a_large_balanced_draw_samples_rows_and_spreads_them_evenly(monkeypatch):
    monkeypatch.setattr(drawing, "DIRECT_DRAW_MIN_ITEMS", 50)
    dataset = one_and_two_step_dataset(one_step_every=4)  # a quarter one-step
    alice, bob = make_user("alice", "tester"), make_user("bob", "tester")
    plan = TestPlan.objects.create(
        dataset=dataset, name="Event", setting="event", items_per_tester=10, seed=5, balance_by="length"
    )
    with CaptureQueriesContext(connection) as queries:
        first = drawing.draw_units(plan, alice)
    item_reads = [q["sql"] for q in queries.captured_queries if 'FROM "benchmarks_item"' in q["sql"]]
    assert item_reads and all('"position" IN' in sql for sql in item_reads)  # no scan of every item
    assert lengths_of(dataset, first) == [1] * 5 + [2] * 5  # as even as the spread of a full scan
    assert len({pk for pk, _, _ in first}) == 10
    assert drawing.draw_units(plan, alice) == first  # reproducible per plan and tester
    assert {pk for pk, _, _ in drawing.draw_units(plan, bob)} != {pk for pk, _, _ in first}


def test_a_value_too_rare_to_sample_falls_back_to_reading_every_row(monkeypatch):
    monkeypatch.setattr(drawing, "DIRECT_DRAW_MIN_ITEMS", 50)
    dataset = one_and_two_step_dataset(one_step_every=100)  # four one-step samples in 400: fewer than a share
    plan = TestPlan.objects.create(
        dataset=dataset, name="Event", setting="event", items_per_tester=10, seed=5, balance_by="length"
    )
    with CaptureQueriesContext(connection) as queries:
        units = drawing.draw_units(plan, make_user("alice", "tester"))
    item_reads = [q["sql"] for q in queries.captured_queries if 'FROM "benchmarks_item"' in q["sql"]]
    assert any('"position" IN' not in sql for sql in item_reads)  # the full scan decided
    assert (
        lengths_of(dataset, units) == [1] * 4 + [2] * 6
    )  # all four one-step samples, as a full scan spreads
