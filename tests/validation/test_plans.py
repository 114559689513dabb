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


def test_a_plan_over_chosen_items_checks_exactly_those_items(cric, people):
    chosen = list(cric.items.order_by("pk").values_list("pk", flat=True)[3:8])
    plan = services.create_plan(
        dataset=cric,
        name="Failed by every tester",
        items=chosen + chosen[:1],  # a repeated id counts once
        source="every tester failed them in test plan “Pilot”",
        overlap=0,
        validators=[people["val"]],
    )
    sampled = set(plan.sampled.values_list("item_id", flat=True))
    assert sampled == set(chosen)
    assert plan.draw["population_size"] == plan.draw["sample_size"] == 5
    assert plan.draw["chosen_items"] == {
        "count": 5,
        "source": "every tester failed them in test plan “Pilot”",
    }


def test_a_plan_over_chosen_items_refuses_items_of_another_dataset_and_changes_nothing(
    cric, cric_files, people
):
    from benchmarks.services import import_dataset

    other = import_dataset(
        benchmark="cric",
        data=cric_files.questions.read_bytes(),
        name="other",
        scenes_data=cric_files.scene_graphs.read_bytes(),
    )
    stranger = other.items.first().pk
    mine = cric.items.first().pk
    with pytest.raises(services.PlanRefused) as refused:
        services.create_plan(
            dataset=cric, name="x", items=[mine, stranger], overlap=0, validators=[people["val"]]
        )
    assert refused.value.problems["items"] == f"item {stranger} is not an item of {cric}"
    with pytest.raises(services.PlanRefused) as refused:
        services.create_plan(
            dataset=cric, name="x", items=[mine], margin=0.05, overlap=0, validators=[people["val"]]
        )
    assert "checks all of them" in refused.value.problems["margin"]
    with pytest.raises(services.PlanRefused) as refused:
        services.create_plan(dataset=cric, name="x", items=[], overlap=0, validators=[people["val"]])
    assert refused.value.problems["items"] == "the list of items to check is empty"
    assert not Plan.objects.exists()


def test_items_every_tester_failed_go_from_the_test_plan_page_to_a_validation_plan(
    cric, people, django_capture_on_commit_callbacks
):
    """Two testers answer the same three CRIC questions wrong; the plan's results offer to check
    exactly those three in a validation plan, and the form it opens makes that plan."""
    from humantest import answers, clock, sessions
    from humantest.models import TestPlan
    from tests.factories import make_user

    testers = [make_user(name, "tester") for name in ("tess2", "tom")]
    with django_capture_on_commit_callbacks(execute=True):
        fixed = list(cric.items.order_by("pk").values_list("external_id", flat=True)[:3])
        pilot = TestPlan.objects.create(
            name="Pilot", dataset=cric, items_per_tester=3, seed=1, draw="fixed", fixed_items=fixed
        )
        pilot.testers.add(*testers)
        for tester in testers:
            session = sessions.begin_test(sessions.start_session(pilot, tester))
            while (trial := clock.serve_current_trial(session)[0]) is not None:
                answers.record_answer(trial.pk, tester, {"answer": "not the answer", "object": None}, {})
    failed = set(pilot.sessions.first().trials.filter(phase="test").values_list("item_id", flat=True))
    assert len(failed) == 3
    client = Client()
    client.force_login(people["res"])
    page = client.get(f"/test/plans/{pilot.pk}/").content.decode()
    assert "Check the 3 items every tester failed in a validation plan" in page
    link = page[page.index('id="validate-flagged" href="') :].split('"')[3].replace("&amp;", "&")
    form = client.get(link).content.decode()
    assert (
        "This plan checks <strong>3 chosen items</strong>: every tester failed them in test plan “Pilot”"
        in form
    )
    from urllib.parse import parse_qs, urlsplit

    query = {key: values[0] for key, values in parse_qs(urlsplit(link).query).items()}
    response = client.post(
        "/validate/plans/new/",
        {
            **query,
            "confidence": "0.95",
            "allocation": "proportional",
            "seed": "0",
            "overlap": "0",
            "validators_per_overlap": "2",
            "lease_seconds": "600",
            "validators": [people["val"].pk],
        },
    )
    plan = Plan.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/validate/plans/{plan.pk}/"
    assert set(plan.sampled.values_list("item_id", flat=True)) == failed
    detail = client.get(response["Location"]).content.decode()
    assert "over 3 chosen items: every tester failed them in test plan “Pilot”" in detail
