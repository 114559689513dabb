"""Drawing a plan: stratified, reproducible, recorded; bad choices refused with nothing made."""

from __future__ import annotations

from collections import Counter

import pytest
from django.test import Client

from annotation.models import Project, Task
from evaluation.sampling import sample_size_for_margin
from validation import services
from validation.models import Plan, Sampled


def sampled_ids(plan) -> set[int]:
    return set(Sampled.objects.filter(plan=plan).values_list("item_id", flat=True))


def test_a_plan_draws_its_sample_by_stratum_and_records_the_draw(plan, cric):
    types = Counter(cric.items.values_list("payload__question_type", flat=True))
    sampled = list(Sampled.objects.filter(plan=plan).select_related("item"))
    assert len(sampled) == plan.draw["sample_size"] == 10
    # Each sampled item sits in the stratum of its own question type; the record says how many of each.
    assert all(row.stratum == row.item.payload["question_type"] for row in sampled)
    assert {name: info["population_size"] for name, info in plan.draw["strata"].items()} == dict(types)
    assert Counter(row.stratum for row in sampled) == {
        name: info["sample_size"] for name, info in plan.draw["strata"].items()
    }
    # One task per sampled item on the plan's queue; half of them want two validators.
    tasks = Task.objects.filter(project=plan.project)
    assert tasks.count() == 10
    assert sorted(tasks.values_list("opinions", flat=True)) == [1] * 5 + [2] * 5
    assert plan.project.kind == Project.Kind.VALIDATION
    assert plan.draw["draw_seconds"] >= 0 and plan.draw["seed"] == 4


def test_the_same_seed_draws_the_same_items_and_another_seed_others(plan, cric, people):
    again = services.create_plan(
        dataset=cric,
        name="Again",
        strata=["question_type"],
        sample_size=10,
        seed=4,
        overlap=0,
        validators=[people["val"]],
    )
    other = services.create_plan(
        dataset=cric,
        name="Other",
        strata=["question_type"],
        sample_size=10,
        seed=5,
        overlap=0,
        validators=[people["val"]],
    )
    assert sampled_ids(again) == sampled_ids(plan)
    assert sampled_ids(other) != sampled_ids(plan)


def test_a_margin_gives_the_size_with_the_finite_population_correction(cric, people):
    plan = services.create_plan(
        dataset=cric, name="Margin", margin=0.15, confidence=0.9, overlap=0, validators=[people["val"]]
    )
    expected = sample_size_for_margin(cric.item_count, 0.15, confidence=0.9)
    assert expected < cric.item_count
    assert plan.draw["sample_size"] == expected == Sampled.objects.filter(plan=plan).count()


def test_equal_allocation_gives_each_stratum_the_same_number(cric, people):
    plan = services.create_plan(
        dataset=cric,
        name="Equal",
        strata=["answer"],
        allocation="equal",
        sample_size=12,
        overlap=0,
        validators=[people["val"]],
    )
    assert {info["sample_size"] for info in plan.draw["strata"].values()} == {6}
    assert set(plan.draw["strata"]) == {"yes/no", "other answer"}


def test_strata_combine_and_read_the_program_length_in_the_database(cric, people):
    plan = services.create_plan(
        dataset=cric,
        name="Steps",
        strata=["steps", "answer"],
        sample_size=15,
        overlap=0,
        validators=[people["val"]],
    )
    for row in Sampled.objects.filter(plan=plan).select_related("item"):
        steps = len(row.item.ground_truth["program"])
        kind = "yes/no" if row.item.ground_truth["answer"].lower() in ("yes", "no") else "other answer"
        assert row.stratum == f"{steps} steps · {kind}"


BAD_CHOICES = [
    ({"sample_size": 5, "margin": 0.1}, "sample_size"),
    ({"sample_size": None}, "sample_size"),
    ({"strata": ["colour"]}, "strata"),
    ({"validators_per_overlap": 4}, "validators_per_overlap"),
    ({"overlap": 0.5, "validators_per_overlap": 3}, "validators"),
    ({"sample_size": 100_000}, "sample_size"),
    ({"name": "  "}, "name"),
    ({"margin": 0.7, "sample_size": None}, "margin"),
]


def test_bad_choices_are_refused_by_field_and_nothing_is_made(cric, people):
    for changes, field in BAD_CHOICES:
        choices = {
            "dataset": cric,
            "name": "Bad",
            "strata": ["question_type"],
            "sample_size": 5,
            "overlap": 0.5,
            "validators": [people["val"], people["vic"]],
            **changes,
        }
        with pytest.raises(services.PlanRefused) as refused:
            services.create_plan(**choices)
        assert field in refused.value.problems, changes
        assert not Plan.objects.exists() and not Project.objects.exists()


def test_a_benchmark_without_a_check_is_refused(people, db):
    from benchmarks.models import Dataset

    questions = Dataset.objects.create(benchmark="stevqa", name="questions")
    with pytest.raises(services.PlanRefused) as refused:
        services.create_plan(dataset=questions, name="No", sample_size=1, validators=[people["val"]])
    assert "no validation check" in refused.value.problems["dataset"]


def test_the_plan_form_makes_a_plan_and_shows_refusals_beside_their_field(cric, people):
    client = Client()
    client.force_login(people["res"])
    page = client.get("/validate/plans/new/")
    assert page.status_code == 200 and b"Question type" in page.content
    refused = client.post(
        "/validate/plans/new/",
        {
            "name": "Both",
            "dataset": cric.pk,
            "sample_size": 5,
            "margin": 0.1,
            "confidence": 0.95,
            "allocation": "proportional",
            "seed": 0,
            "overlap": 0,
            "validators_per_overlap": 2,
            "lease_seconds": 600,
            "validators": [people["val"].pk],
        },
    )
    assert refused.status_code == 200
    assert "either a sample size or a target margin" in refused.content.decode()
    assert not Plan.objects.exists()
    made = client.post(
        "/validate/plans/new/",
        {
            "name": "Good",
            "dataset": cric.pk,
            "sample_size": 5,
            "confidence": 0.95,
            "strata": ["question_type"],
            "allocation": "equal",
            "seed": 0,
            "overlap": 0.2,
            "validators_per_overlap": 2,
            "lease_seconds": 600,
            "validators": [people["val"].pk, people["vic"].pk],
        },
        follow=True,
    )
    plan = Plan.objects.get(name="Good")
    assert made.redirect_chain[-1][0] == f"/validate/plans/{plan.pk}/"
    assert plan.allocation == "equal" and plan.draw["sample_size"] == 5


def test_validation_queues_stay_out_of_the_annotation_pages(plan, people):
    client = Client()
    client.force_login(people["vic"])
    assert plan.name not in client.get("/annotate/").content.decode()
    assert plan.name in client.get("/validate/").content.decode()
    client.force_login(people["res"])
    assert plan.name not in client.get("/annotate/projects/").content.decode()
    assert plan.name in client.get("/validate/plans/").content.decode()
