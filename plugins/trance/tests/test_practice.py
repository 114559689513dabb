"""Practice that teaches TRANCE's direction words: "behind" moves an object toward the camera."""

import pytest

from humantest.trials import trial_for
from humantest.trials.base import TrialUnit

pytestmark = pytest.mark.django_db


def moved_by(item, direction: str) -> bool:
    return any(
        step["attr"] == "position" and step["val"][0] == direction
        for step in item.ground_truth["transformations"]
    )


def test_the_suggested_practice_starts_with_an_item_that_moves_something_behind_or_front(trance_dataset):
    trial = trial_for("trance")
    suggested = trial.suggested_practice(trance_dataset.items.all(), 2)
    assert len(suggested) == 2 and len(set(suggested)) == 2
    first = trance_dataset.items.get(external_id=suggested[0])
    assert moved_by(first, "behind") or moved_by(first, "front")
    teaching = [
        item for item in trance_dataset.items.all() if moved_by(item, "behind") or moved_by(item, "front")
    ]
    assert len(first.ground_truth["transformations"]) == min(
        len(item.ground_truth["transformations"]) for item in teaching
    )


def test_a_wrong_position_is_explained_in_words_and_in_trances(trance_dataset):
    """The guidance after a practice answer that leaves a moved object in place says which way it
    went and what TRANCE calls that: "behind" is toward the centre camera, down in the top view."""
    item = next(item for item in trance_dataset.items.order_by("position") if moved_by(item, "behind"))
    trial = trial_for("trance")
    unit = TrialUnit(item=item, part=0, context={"setting": "event", "camera": "Camera_Center"}, key=1)
    lines = trial.explain(unit, [])
    (lesson,) = [line for line in lines if "TRANCE calls that" in line and "“behind”" in line]
    assert "toward the centre camera" in lesson and "down in the top view" in lesson
    # A right answer gets no lesson.
    steps = [
        {k: step[k] for k in ("obj_idx", "attr", "val")} for step in item.ground_truth["transformations"]
    ]
    assert not [line for line in trial.explain(unit, steps) if "TRANCE calls that" in line]
