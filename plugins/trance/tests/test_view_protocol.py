"""View scored as the released ViewEvaluator does: every sample once per final camera, 3 x N units,
one answer per (sample, camera); the one-camera variant; prediction files with an answer per
camera; the human trials' answers, one (sample, camera) pair a trial.

Worked numbers (the same as docs/metrics-trance.md, "View"). Object 0 starts red at (0, 0).
Sample 0: one true step, object 0 turns blue. Sample 1: two, object 0 turns blue and moves right 1.
Answers: sample 0 one list, the true step (it answers all three cameras); sample 1 one answer
per camera: Left the true steps, Center only the colour step, Right none.

    unit               dist  norm_dist  loose  correct
    0 Camera_Left        0       0        1       1
    0 Camera_Center      0       0        1       1
    0 Camera_Right       0       0        1       1
    1 Camera_Left        0       0        1       1
    1 Camera_Center      1      1/2       0       0      (the position differs)
    1 Camera_Right       2       1        0       0      (no answer: initial state, 2 pairs differ)

    AD = 3/6 = 0.5, AND = 1.5/6 = 0.25, LAcc = Acc = 4/6
    Left: AD 0, LAcc 1; Center: AD 1/2, AND 1/4, LAcc 1/2; Right: AD 1, AND 1/2, LAcc 1/2
    by length: "1" 3 units, LAcc 1; "2" 3 units, LAcc 1/3, AD (0 + 1 + 2) / 3 = 1
"""

from __future__ import annotations

import io
from types import SimpleNamespace

import orjson
import pytest

from benchmarks.records import FormatError
from benchmarks.spec import ScoringFiles, ScoringInput
from plugins.trance import formats, metric
from plugins.trance.formats import VIEW
from plugins.trance.spec import ONE_CAMERA, SPEC
from plugins.trance.tests.helpers import change, move, sample, scene, thing
from plugins.trance.trial import TranceTrial

LEFT, CENTER, RIGHT = "Camera_Left", "Camera_Center", "Camera_Right"
BLUE = change(0, "color", "blue")
RIGHT_1 = move(0, "right", 1)


def worked_samples():
    initial = scene(thing(0, 0, color="red"))
    return [sample(0, initial, [BLUE]), sample(1, initial, [BLUE, RIGHT_1])]


def worked_answers():
    return {0: [BLUE], 1: {LEFT: [BLUE, RIGHT_1], CENTER: [BLUE]}}


def jsonl(samples):
    return b"".join(orjson.dumps(one) + b"\n" for one in samples)


# --- The released protocol -----------------------------------------------------------------------


def test_every_sample_is_scored_once_per_final_camera():
    scored = metric.score_view_cameras(worked_samples(), worked_answers())
    rows = [
        (item["idx"], item["camera"], item["dist"], item["norm_dist"], item["correct"])
        for item in scored.items
    ]
    assert rows == [
        (0, LEFT, 0, 0.0, True),
        (0, CENTER, 0, 0.0, True),
        (0, RIGHT, 0, 0.0, True),
        (1, LEFT, 0, 0.0, True),
        (1, CENTER, 1, 0.5, False),
        (1, RIGHT, 2, 1.0, False),
    ]
    assert [item["missing"] for item in scored.items] == [False] * 5 + [True]
    summary = scored.summary
    assert (summary["n"], summary["samples"]) == (6, 2)
    assert summary["AD"] == 0.5 and summary["AND"] == 0.25
    assert summary["LAcc"] == summary["Acc"] == pytest.approx(4 / 6)
    by_camera = summary["by_camera"]
    assert (by_camera[LEFT]["n"], by_camera[LEFT]["AD"], by_camera[LEFT]["LAcc"]) == (2, 0.0, 1.0)
    assert (by_camera[CENTER]["AD"], by_camera[CENTER]["AND"], by_camera[CENTER]["LAcc"]) == (0.5, 0.25, 0.5)
    assert (by_camera[RIGHT]["AD"], by_camera[RIGHT]["AND"], by_camera[RIGHT]["Acc"]) == (1.0, 0.5, 0.5)
    assert (summary["by_length"]["1"]["n"], summary["by_length"]["1"]["LAcc"]) == (3, 1.0)
    assert (
        summary["by_length"]["2"]["LAcc"] == pytest.approx(1 / 3) and summary["by_length"]["2"]["AD"] == 1.0
    )
    # The one unit without an answer is named with its camera.
    assert summary["missing_predictions"] == 1
    assert scored.problems == [
        "1 (sample, camera) unit has no answer and is scored as an empty answer "
        "(the initial state stays as it is): idx 1 Camera_Right"
    ]
    assert (
        scored.params["variant"] == "official"
        and scored.params["units"] == "every sample under each final camera"
    )
    # A per-unit row belongs to its sample's unit: the report pairs rows with units by idx.
    assert [SPEC.row_id(item) for item in scored.items] == ["0", "0", "0", "1", "1", "1"]


def test_the_one_camera_variant_scores_each_answer_with_the_camera_given():
    # Sample 0 from the Left (its list answers it: dist 0), sample 1 from the Right (no answer
    # for that camera: dist 2). n 2, AD 1, LAcc 1/2.
    scored = metric.score_view(worked_samples(), worked_answers(), {0: LEFT, 1: RIGHT})
    assert [(item["camera"], item["dist"]) for item in scored.items] == [(LEFT, 0), (RIGHT, 2)]
    assert (scored.summary["n"], scored.summary["AD"], scored.summary["LAcc"]) == (2, 1.0, 0.5)
    assert scored.params["variant"] == "one-camera"


def test_only_the_cameras_shown_are_scored_when_they_are_given():
    # Sample 0 shown from the Left; sample 1 from the Center and the Right: 3 units, dist 0, 1, 2.
    scored = metric.score_view_cameras(worked_samples(), worked_answers(), {0: LEFT, 1: [CENTER, RIGHT]})
    assert [(item["idx"], item["camera"], item["dist"]) for item in scored.items] == [
        (0, LEFT, 0),
        (1, CENTER, 1),
        (1, RIGHT, 2),
    ]
    assert scored.summary["AD"] == 1.0 and scored.params["units"] == "the cameras each sample was shown with"


def test_cameras_given_must_be_known_and_given_for_every_sample():
    with pytest.raises(FormatError) as caught:
        metric.score_view_cameras(worked_samples(), {}, {0: "Camera_Top"})
    assert [(error.record, error.field) for error in caught.value.errors] == [
        ("idx 0", "camera"),
        ("idx 1", "camera"),
    ]
    assert "unknown camera 'Camera_Top'" in str(caught.value.errors[0])
    assert "no final camera given" in str(caught.value.errors[1])
    with pytest.raises(FormatError, match="camera 'Camera_Left' given twice"):
        metric.score_view_cameras(worked_samples(), {}, {0: [LEFT, LEFT], 1: LEFT})


def test_an_answer_per_camera_is_refused_outside_view():
    answers = {0: {LEFT: [BLUE]}}
    for score in (metric.score_event, metric.score_basic):
        with pytest.raises(FormatError) as caught:
            score(worked_samples()[:1], answers)
        assert [(error.record, error.field) for error in caught.value.errors] == [("idx 0", "answer")]
        assert "for the View setting only" in str(caught.value)
    # The same from files, read whole (Basic) or packed as they are read (Event).
    data = orjson.dumps({"0": {LEFT: [BLUE]}})
    for setting in ("basic", "event"):
        with pytest.raises(FormatError) as caught:
            metric.score_file(jsonl(worked_samples()[:1]), data, setting=setting)
        assert [(error.record, error.field) for error in caught.value.errors] == [("idx 0", "answer")]


def test_bad_answers_per_camera_given_in_memory_are_named_with_their_camera():
    bad = {0: {LEFT: [change(0, "color", "pink")]}, 1: {"Camera_Top": []}}
    with pytest.raises(FormatError) as caught:
        metric.score_view_cameras(worked_samples(), bad)
    assert [(error.record, error.field) for error in caught.value.errors] == [
        ("idx 0", "Camera_Left[0].val"),
        ("idx 1", "Camera_Top"),
    ]


# --- Prediction files ----------------------------------------------------------------------------


def worked_file() -> bytes:
    return orjson.dumps(
        {"0": [BLUE], "1": {"Camera_Left": [{**BLUE, "options": ["blue"]}, RIGHT_1], "Camera_Center": [BLUE]}}
    )


def test_a_prediction_file_holds_a_list_or_an_answer_per_camera():
    assert metric.parse_predictions(worked_file()) == worked_answers()
    packed = metric.read_packed_predictions(io.BytesIO(worked_file()))
    assert packed[0] == metric.pack_answer([BLUE])
    assert packed[1] == {LEFT: metric.pack_answer([BLUE, RIGHT_1]), CENTER: metric.pack_answer([BLUE])}


@pytest.mark.parametrize("streamed", [False, True])
def test_bad_answers_per_camera_are_named_with_idx_and_field(streamed):
    data = orjson.dumps(
        {
            "0": {"Camera_Top": [BLUE], "Camera_Left": []},
            "1": {"Camera_Left": [change(0, "color", "pink")], "Camera_Right": "blue"},
            "2": BLUE,
            "3": {"Camera_Center": [{"obj_idx": 12, "attr": "color", "val": "red"}, "up"]},
            "4": 7,
        }
    )
    with pytest.raises(FormatError) as caught:
        if streamed:
            metric.read_packed_predictions(io.BytesIO(data))
        else:
            metric.parse_predictions(data)
    assert [(error.record, error.field) for error in caught.value.errors] == [
        ("idx 0", "Camera_Top"),
        ("idx 1", "Camera_Left[0].val"),
        ("idx 1", "Camera_Right"),
        ("idx 2", "steps"),
        ("idx 3", "Camera_Center[0].obj_idx"),
        ("idx 3", "Camera_Center[1]"),
        ("idx 4", "steps"),
    ]
    messages = [error.message for error in caught.value.errors]
    assert messages[0] == "unknown camera 'Camera_Top' (expected Camera_Left, Camera_Center, Camera_Right)"
    assert "got one step (put it in a list)" in messages[3]


@pytest.mark.parametrize("batch", [1, 4096])
def test_the_file_scorer_streamed_or_whole_and_the_spec_give_the_same_view_result(monkeypatch, batch):
    monkeypatch.setattr(metric.streamed, "BATCH", batch)
    samples = worked_samples()
    in_memory = metric.score_view_cameras(samples, worked_answers())
    whole = metric.score_file(jsonl(samples), worked_file(), setting="view")
    streamed = metric.score_file(io.BytesIO(jsonl(samples)), io.BytesIO(worked_file()), setting="view")
    records = [SPEC.formats.to_official(*payload_and_truth(one)) for one in samples]
    through_spec = SPEC.score(
        ScoringInput(records=records, answers=SPEC.read_predictions(worked_file()), setting="view")
    )
    files = SPEC.score_files(
        ScoringFiles(io.BytesIO(jsonl(samples)), io.BytesIO(worked_file()), setting=VIEW)
    )
    for scored in (whole, streamed, through_spec, files):
        assert scored.summary == in_memory.summary
        assert list(scored.items) == list(in_memory.items)
        assert scored.problems == in_memory.problems
    # The one-camera variant, through the spec and from files, with the same given cameras.
    given = {0: LEFT, 1: RIGHT}
    one_camera = metric.score_file(
        jsonl(samples), worked_file(), setting="view", variant="one-camera", cameras=given
    )
    spec_one_camera = SPEC.score(
        ScoringInput(
            records=records,
            answers=SPEC.read_predictions(worked_file()),
            setting="view",
            variant=ONE_CAMERA,
            options={"cameras": {"0": LEFT, "1": RIGHT}},
        )
    )
    assert one_camera.summary == spec_one_camera.summary and one_camera.summary["AD"] == 1.0


def payload_and_truth(one):
    catalog = formats.record_to_catalog(one, None)
    return catalog.payload, catalog.ground_truth


def test_a_word_left_under_cameras_in_a_submissions_parameters_is_not_a_camera_choice():
    # A scoring writes "cameras": "view_cameras(seed=0)" into the parameters a rescoring reads back
    # as its options: it scores as if nothing were given, instead of failing.
    records = [SPEC.formats.to_official(*payload_and_truth(one)) for one in worked_samples()]
    answers = SPEC.read_predictions(worked_file())
    for variant in ("official", ONE_CAMERA):
        plain = SPEC.score(ScoringInput(records=records, answers=answers, setting="view", variant=variant))
        again = SPEC.score(
            ScoringInput(
                records=records,
                answers=answers,
                setting="view",
                variant=variant,
                options={**plain.params, "cameras": "view_cameras(seed=0)"},
            )
        )
        assert again.summary == plain.summary


def test_answers_per_camera_read_and_compare_on_the_pages():
    assert SPEC.answer_lines({LEFT: [BLUE], RIGHT: []}) == [
        "Camera_Left: object 0: color → blue",
        "Camera_Right: no steps",
    ]
    same = {LEFT: [BLUE], CENTER: [BLUE]}
    assert SPEC.answer_label(same) == SPEC.answer_label([BLUE])
    assert SPEC.answer_label({LEFT: [BLUE], CENTER: []}) != SPEC.answer_label([BLUE])


# --- Human trials: one (sample, camera) pair a trial ---------------------------------------------


def trial_unit(one, key, camera, seconds=None):
    payload, ground_truth = payload_and_truth(one)
    item = SimpleNamespace(external_id=str(one["idx"]), payload=payload, ground_truth=ground_truth)
    context = {"setting": VIEW, "camera": camera}
    if seconds is not None:
        context["seconds"] = seconds
    return SimpleNamespace(item=item, part=0, context=context, key=key)


def test_human_trials_are_scored_per_sample_and_camera_shown():
    # Four trials: sample 1 shown from the Left (answered right), the Center (only the colour:
    # dist 1) and the Right (timed out: no answer, dist 2), sample 0 from the Center (right).
    # Each trial is one unit under the camera it showed, never under the two it did not show.
    samples = worked_samples()
    units = [
        trial_unit(samples[1], 11, LEFT, 12.0),
        trial_unit(samples[1], 12, CENTER, 20.0),
        trial_unit(samples[1], 13, RIGHT, 45.0),
        trial_unit(samples[0], 14, CENTER, 30.0),
    ]
    trial = TranceTrial(SPEC)
    assert trial.prediction(units[0], [BLUE]) == {LEFT: [BLUE]}
    scored = trial.score(VIEW, units, {11: [BLUE, RIGHT_1], 12: [BLUE], 14: [BLUE]})
    assert [(item["idx"], item["camera"], item["dist"]) for item in scored.items] == [
        (11, LEFT, 0),
        (12, CENTER, 1),
        (13, RIGHT, 2),
        (14, CENTER, 0),
    ]
    by_camera = scored.summary["by_camera"]
    assert (by_camera[LEFT]["n"], by_camera[CENTER]["n"], by_camera[RIGHT]["n"]) == (1, 2, 1)
    assert (by_camera[CENTER]["AD"], by_camera[CENTER]["LAcc"]) == (0.5, 0.5)
    # Seconds per trial by camera: Left 12, Center (20 + 30) / 2 = 25, Right 45; all (12 + 20 + 45 + 30) / 4.
    assert [by_camera[camera]["seconds"] for camera in (LEFT, CENTER, RIGHT)] == [12.0, 25.0, 45.0]
    assert scored.summary["seconds"] == 26.75
    assert [item["seconds"] for item in scored.items] == [12.0, 20.0, 45.0, 30.0]
    # One trial alone (how a tester's answer is scored when it arrives): one row, its camera.
    alone = trial.score(VIEW, [units[1]], {12: [BLUE]})
    assert [(item["idx"], item["camera"], item["dist"]) for item in alone.items] == [(12, CENTER, 1)]


def test_human_trials_without_times_have_no_seconds():
    samples = worked_samples()
    scored = TranceTrial(SPEC).score(VIEW, [trial_unit(samples[0], 5, RIGHT)], {5: [BLUE]})
    assert "seconds" not in scored.items[0] and "seconds" not in scored.summary["by_camera"][RIGHT]
