"""CLEVR-Ref+ tests on data with false-premise expressions (ones that refer to no object): testers
may answer "Nothing fits", which is right there and wrong elsewhere; on other data the choice is
not offered and an answer of nothing is refused."""

import json

import pytest

from benchmarks.services import import_dataset
from humantest import answers, clock, sessions
from humantest.models import Trial
from humantest.scoring import unit_for
from humantest.trials import trial_for
from tests.factories import make_plan, make_user

pytestmark = pytest.mark.django_db

NOTHING = {"objects": [], "nothing": True}


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    from plugins.clevrref.expressions import generate

    return generate(
        tmp_path_factory.mktemp("fp"), images=1, seed=3, expressions_per_image=8, false_premise_share=0.5
    )


def imported(files, *, flagged: bool):
    document = json.loads(files.refexps_file.read_text())
    if not flagged:
        document.pop("false_premise_share", None)
    return import_dataset(
        benchmark="clevrref",
        data=json.dumps(document).encode(),
        name="false premises" if flagged else "unflagged",
        split="val",
        images_dir=files.images_dir,
        scenes_data=files.scenes_file.read_bytes(),
        scenes_source=files.scenes_file.name,
    )


def answer_nothing(dataset, external_id: str):
    """One tester's trial on item `external_id`, answered "Nothing fits": the trial and the answer's
    outcome (the trial type's `correct`) or the refusal."""
    tester = make_user(f"t{dataset.pk}{external_id}", "tester")
    plan = make_plan(dataset, tester, setting="", draw="fixed", fixed_items=[external_id])
    session = sessions.begin_test(sessions.start_session(plan, tester))
    trial = clock.serve_current_trial(session)[0]
    return trial, answers.record_answer(trial.pk, tester, NOTHING, {})


def false_premise_ids(dataset) -> tuple[list[str], list[str]]:
    empty, referring = [], []
    for item in dataset.items.order_by("position"):
        (empty if not item.ground_truth["program"][-1]["_output"] else referring).append(item.external_id)
    return empty, referring


def test_nothing_fits_is_right_on_a_false_premise_and_wrong_elsewhere(generated):
    dataset = imported(generated, flagged=True)
    empty, referring = false_premise_ids(dataset)
    assert empty and referring, "the generator made no false premise (or only those)"
    trial_type = trial_for("clevrref")

    trial, _ = answer_nothing(dataset, empty[0])
    trial = Trial.objects.get(pk=trial.pk)
    assert trial_type.view(unit_for(trial))["nothing_allowed"] is True
    assert trial.status == Trial.Status.ANSWERED and trial.answer["objects"] == []
    assert trial.result["false_premise"] and trial.result["false_premise_correct"]
    assert trial_type.correct(trial.result) is True

    trial, _ = answer_nothing(dataset, referring[0])
    trial = Trial.objects.get(pk=trial.pk)
    assert trial_type.correct(trial.result) is False and trial.result["mask_iou"] == 0


def test_nothing_is_refused_where_no_expression_can_refer_to_nothing(generated):
    dataset = imported(generated, flagged=False)
    _, referring = false_premise_ids(dataset)
    tester = make_user("plain", "tester")
    plan = make_plan(dataset, tester, setting="", draw="fixed", fixed_items=[referring[0]])
    session = sessions.begin_test(sessions.start_session(plan, tester))
    trial = clock.serve_current_trial(session)[0]
    assert trial_for("clevrref").view(unit_for(trial))["nothing_allowed"] is False
    with pytest.raises(answers.AnswerRefused) as refused:
        answers.record_answer(trial.pk, tester, NOTHING, {})
    assert refused.value.field == "nothing"
    assert Trial.objects.get(pk=trial.pk).status == Trial.Status.SERVED
