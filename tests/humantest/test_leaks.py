"""Ground truth never reaches a tester before their answer to that trial is final.

Two checks for every benchmark: the trial's view is built without reading the item's ground
truth at all, and every response a tester receives on the way to a trial (home, test list, brief,
practice and test trial pages, history) holds none of the ground truth's telltale strings. The
same strings are found in the answer's response, so the check is able to fail.
"""

import json

import pytest

from benchmarks.services import import_dataset
from humantest import drawing
from humantest.models import TestPlan, Trial
from humantest.trials import TrialUnit, trial_for
from tests.benchmarks import builders
from tests.factories import logged_in, make_user

pytestmark = pytest.mark.django_db

SENTINEL = "qzx-sentinel-answer"


def stevqa_training_records():
    return [
        {
            "id": index,
            "image": f"street_{index}.jpg",
            "annotation": [
                {
                    "question": "What does the sign say?",
                    "answer": f"{SENTINEL}-{index}",
                    "evidence": ["1", "2", "30", "2", "30", "20", "1", "20"],
                },
                {
                    "question": "招牌上写的是什么?",
                    "answer": f"{SENTINEL}-中{index}",
                    "evidence": ["5", "5", "60", "5", "60", "40", "5", "40"],
                },
            ],
        }
        for index in range(3)
    ]


def build_dataset(benchmark, trance_dataset):
    if benchmark == "trance":
        return trance_dataset
    if benchmark == "cric":
        questions = builders.cric_questions()
        for question in questions:
            question["answer"] = f"{SENTINEL}-{question['question_id']}"
        return import_dataset(
            benchmark="cric",
            data=json.dumps(questions).encode(),
            name="leak cric",
            scenes_data=json.dumps(builders.cric_scenes()).encode(),
        )
    if benchmark == "clevrref":
        return import_dataset(
            benchmark="clevrref",
            data=json.dumps(builders.clevrref_document()).encode(),
            name="leak clevrref",
            scenes_data=json.dumps(builders.clevrref_scenes()).encode(),
        )
    return import_dataset(
        benchmark="stevqa", data=json.dumps(stevqa_training_records()).encode(), name="leak stevqa"
    )


def telltales(trial) -> list[str]:
    """Strings that appear in a response only if it carries this trial's ground truth."""
    truth = trial.item.ground_truth
    found = ['"truth": ', '"ground_truth": ']
    if trial.item.dataset.benchmark == "trance":
        found += ['"transformations": ', '"final_objects": ']
        found += [
            json.dumps({key: step[key] for key in ("obj_idx", "attr", "val")})[1:-1]
            for step in truth["transformations"]
        ]
    elif trial.item.dataset.benchmark == "cric":
        found += ['"target": ', '"program": ', truth["answer"]]
    elif trial.item.dataset.benchmark == "clevrref":
        found += ['"program": ', '"_output": ']
    else:
        qa = truth["annotation"][trial.part]
        found += ['"evidence": ', qa["answer"], json.dumps(qa["answer"], ensure_ascii=True)[1:-1]]
    return found


class NoTruthItem:
    """An item whose ground truth cannot be read: any attempt fails the test."""

    def __init__(self, item):
        self._item = item

    def __getattr__(self, name):
        if name == "ground_truth":
            raise AssertionError("a tester-facing view read the ground truth")
        return getattr(self._item, name)


BENCHMARKS = ["trance", "cric", "clevrref", "stevqa"]


def eligible_all(monkeypatch):
    # The leak datasets are imported without images; let every item be shown anyway.
    for benchmark in BENCHMARKS:
        monkeypatch.setattr(trial_for(benchmark), "drawable", lambda items: items)


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_trial_views_are_built_without_reading_ground_truth(benchmark, trance_dataset, monkeypatch):
    eligible_all(monkeypatch)
    dataset = build_dataset(benchmark, trance_dataset)
    kind = trial_for(benchmark)
    for item in dataset.items.select_related("scene", "dataset"):
        for part in range(kind.parts({"questions": item.payload.get("questions")})):
            unit = TrialUnit(item=NoTruthItem(item), part=part, context={"setting": ""}, key=1)
            view = kind.view(unit)
            assert view and json.dumps(view)


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_no_tester_facing_response_carries_ground_truth_before_the_answer(
    benchmark, trance_dataset, client, monkeypatch
):
    eligible_all(monkeypatch)
    dataset = build_dataset(benchmark, trance_dataset)
    tester = make_user("tessa", "tester")
    first = dataset.items.order_by("position").first()
    plan = TestPlan.objects.create(
        name="Leak check",
        dataset=dataset,
        setting="event" if benchmark == "trance" else "",
        items_per_tester=2,
        practice_items=[first.external_id],
        time_limit_s=60,
    )
    plan.testers.add(tester)
    logged_in(client, tester)

    def fetched(response):
        assert response.status_code in (200, 302), response
        return response.content.decode()

    seen = [fetched(client.get("/")), fetched(client.get("/test/"))]
    seen.append(fetched(client.post(f"/test/plans/{plan.pk}/start/", follow=True)))
    session = plan.sessions.get()
    seen.append(fetched(client.post(f"/test/sessions/{session.pk}/practice/", follow=True)))
    checked = 0
    for _ in range(3):  # the practice trial, then two test trials
        page = client.get(f"/test/sessions/{session.pk}/")
        if "data" not in page.context:
            seen.append(fetched(client.post(f"/test/sessions/{session.pk}/begin/", follow=True)))
            page = client.get(f"/test/sessions/{session.pk}/")
        if "data" not in page.context:
            break  # the dataset had fewer test items
        trial = Trial.objects.select_related("item__dataset").get(pk=page.context["data"]["trial"])
        before = [
            *seen,
            fetched(page),
            fetched(client.get(f"/test/sessions/{session.pk}/")),
            fetched(client.get("/test/history/")),
        ]
        for text in telltales(trial):
            for body in before:
                assert text not in body, f"{benchmark}: {text!r} reached the tester before the answer"
        answer = json.dumps({"answer": None})
        if benchmark == "trance":
            answer = json.dumps({"answer": {"steps": [{"obj_idx": 0, "attr": "color", "val": "red"}]}})
        response = client.post(page.context["data"]["answer_url"], answer, content_type="application/json")
        if response.status_code == 400:  # an answer of the wrong shape changes nothing; close by time
            Trial.objects.filter(pk=trial.pk).update(deadline=trial.served_at)
            response = client.post(page.context["data"]["timeout_url"], "{}", content_type="application/json")
        assert response.status_code == 200
        after = response.content.decode()
        # The check can fail: once the answer is final, the truth is in the response.
        assert any(text in after for text in telltales(trial)), f"{benchmark}: the result shows no truth"
        seen.append(after)
        seen = seen[:-1]  # later trials' pages are checked against their own truth only
        checked += 1
    assert checked >= 2  # at least the practice trial and one test trial


@pytest.mark.parametrize(
    ("benchmark", "field"),
    [
        (benchmark, field)
        for benchmark in BENCHMARKS
        for field, balance in trial_for(benchmark).balance_fields.items()
        if balance.of_items
    ],
)
def test_every_balance_field_draws_from_light_rows(benchmark, field, trance_dataset, monkeypatch):
    eligible_all(monkeypatch)
    dataset = build_dataset(benchmark, trance_dataset)
    tester = make_user("tessa", "tester")
    plan = TestPlan.objects.create(
        name="Balanced",
        dataset=dataset,
        setting="event" if benchmark == "trance" else "",
        balance_by=field,
        items_per_tester=4,
    )
    kind = trial_for(benchmark)
    items = {item.pk: item for item in dataset.items.all()}
    units = drawing.draw_units(plan, tester)
    assert units and len({pk for pk, _, _ in units}) == len(units)  # no item twice
    for pk, part, _ in units:
        row = {"questions": items[pk].payload.get("questions")}
        assert 0 <= part < kind.parts(row)
