"""Agreement between testers: the raters are the testers (not the pooled row), per question."""

import pytest

from evaluation.agreement_reports import dataset_agreement, ratings_of
from humantest.models import TestPlan, Trial
from tests.factories import answer_all, make_user, steps_of
from tests.humantest.test_leaks import build_dataset, eligible_all

pytestmark = pytest.mark.django_db


def test_testers_are_the_raters_and_the_pooled_row_is_not(
    trance_dataset, django_capture_on_commit_callbacks, client
):
    alice, bob = make_user("alice", "tester"), make_user("bob", "tester")
    plan = TestPlan.objects.create(
        name="Agree", dataset=trance_dataset, setting="event", draw="fixed", fixed_items=["0", "1", "2"]
    )
    plan.testers.add(alice, bob)

    def wrong_on_2(trial):
        if trial.item.external_id == "2":
            return {
                "steps": [
                    {
                        "obj_idx": 0,
                        "attr": "shape",
                        "val": "cube"
                        if trial.item.payload["initial"]["objects"][0]["shape"] != "cube"
                        else "sphere",
                    }
                ]
            }
        return {"steps": steps_of(trial.item)}

    with django_capture_on_commit_callbacks(execute=True):
        answer_all(plan, alice)
        answer_all(plan, bob, wrong_on_2)
    plan.refresh_from_db()
    assert plan.pooled_submission is not None
    report = dataset_agreement(trance_dataset, resamples=50)
    assert len(report["raters"]) == 2 and all("alice" in r or "bob" in r for r in report["raters"])
    assert report["items_rated"] == 3
    percent = report["statistics"][0]
    assert percent["statistic"] == "percent_agreement"
    assert percent["value"] == pytest.approx(2 / 3)
    # The plan's page shows the same, for its own testers.
    client.force_login(make_user("rita", "researcher"))
    page = client.get(f"/test/plans/{plan.pk}/")
    shown = page.context["agreement"]
    assert shown[0]["name"] == "percent agreement" and shown[0]["value"] == pytest.approx(2 / 3)
    assert shown[0]["items"] == 3 and shown[0]["raters"] == 2
    # Named for people; a step list has no free text or region, so no text similarity or region IoU.
    assert [row["name"] for row in shown] == [
        "percent agreement",
        "Krippendorff's alpha (nominal)",
        "Fleiss' kappa",
    ]
    assert "Agreement between testers" in page.content.decode()


def test_each_question_of_an_image_is_rated_on_its_own(trance_dataset, monkeypatch):
    eligible_all(monkeypatch)
    dataset = build_dataset("stevqa", trance_dataset)
    testers = [make_user(f"t{index}", "tester") for index in range(4)]
    plan = TestPlan.objects.create(name="Signs", dataset=dataset, items_per_tester=3)
    plan.testers.add(*testers)
    for tester in testers:
        answer_all(plan, tester, lambda trial: {"answer": "x", "evidence": [0, 0, 9, 0, 9, 9, 0, 9]})
    ratings, _ = ratings_of(dataset)
    asked = {str(t.item.payload["question_ids"][t.part]) for t in Trial.objects.filter(session__plan=plan)}
    assert set(ratings) == asked
    assert sum(len(by_rater) for by_rater in ratings.values()) == 12
